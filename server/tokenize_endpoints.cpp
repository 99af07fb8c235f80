#include "server/tokenize_endpoints.h"

#include "server/api_error.h"
#include "server/completion_format.h"
#include "server/json_body.h"

namespace eagerlm::server {

std::string tokenize_response(const nlohmann::json& body, const Model& model) {
  Fields f(body);
  const std::optional<std::string> content = f.string("content");
  if (!content) throw invalid_field("content", "content is required: the text to tokenize");
  const bool with_pieces = f.boolean("with_pieces").value_or(false);
  (void)f.boolean("add_special");  // GPT-2 adds no special tokens (no BOS): accepted, no effect
  const bool parse_special = f.boolean("parse_special").value_or(false);
  f.reject_unknown();
  std::vector<int32_t> ids;
  try {
    ids = model.tokenize(*content, parse_special);
  } catch (const Error& e) {
    throw invalid_field("content", e.what());
  }
  nlohmann::json tokens = nlohmann::json::array();
  for (const int32_t id : ids) {
    if (!with_pieces) {
      tokens.push_back(id);
      continue;
    }
    const std::string piece = model.detokenize({id});
    nlohmann::json p = {{"id", id}};
    if (token_display(piece) == piece) {
      p["piece"] = piece;
    } else {
      nlohmann::json bytes = nlohmann::json::array();
      for (const char c : piece) bytes.push_back(int(static_cast<unsigned char>(c)));
      p["piece"] = bytes;
    }
    tokens.push_back(std::move(p));
  }
  return json_text({{"tokens", tokens}});
}

std::string detokenize_response(const nlohmann::json& body, const Model& model) {
  Fields f(body);
  const nlohmann::json* tokens = f.get("tokens");
  f.reject_unknown();
  if (!tokens) throw invalid_field("tokens", "tokens is required: a list of token ids");
  if (!tokens->is_array()) throw invalid_field("tokens", "tokens must be a list of token ids, got " + json_type_name(*tokens));
  const size_t vocab = model.info().vocab_size;
  std::vector<int32_t> ids;
  for (size_t i = 0; i < tokens->size(); ++i) {
    const nlohmann::json& v = (*tokens)[i];
    const bool integer = v.is_number_integer() || v.is_number_unsigned();
    if (!integer || (v.is_number_integer() && v.get<int64_t>() < 0) || v.get<uint64_t>() >= vocab)
      throw invalid_field("tokens", "tokens[" + std::to_string(i) + "] must be a token id in [0, " +
                                        std::to_string(vocab) + "), got " + json_text(v));
    ids.push_back(v.get<int32_t>());
  }
  return json_text({{"content", model.detokenize(ids)}});
}

}  // namespace eagerlm::server
