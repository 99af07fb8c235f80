// `eagerlm detokenize [-m DIR]`: token ids on standard input (separated by spaces, commas or
// newlines, or one JSON array) -> text on standard output. Bytes that do not form valid UTF-8
// become U+FFFD, as GPT-2's decoder does (errors="replace"). A token that is not an id of the
// vocabulary is an error naming it.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/utf8.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/commands.h"

namespace eagerlm::cli {
namespace {

struct DetokenizeOptions {
  std::string model_dir;
};

[[noreturn]] void bad_token(const std::string& token, size_t index, const std::string& why) {
  throw_error(ErrorCode::kInvalidArgument,
              "standard input: token " + std::to_string(index + 1) + " '" + token + "' " + why);
}

int32_t parse_id(const std::string& token, size_t index, int32_t vocab_size) {
  const std::string range = "is not a token id (expected an integer from 0 to " + std::to_string(vocab_size - 1) + ")";
  size_t digits = token[0] == '-' || token[0] == '+' ? 1 : 0;
  if (digits == token.size()) bad_token(token, index, range);
  for (size_t i = digits; i < token.size(); ++i)
    if (token[i] < '0' || token[i] > '9') bad_token(token, index, range);
  if (token[0] == '-' || token.size() - digits > 10) bad_token(token, index, range);
  const long long value = std::stoll(token);
  if (value >= vocab_size) bad_token(token, index, range);
  return int32_t(value);
}

std::vector<int32_t> parse_ids(const std::string& input, int32_t vocab_size) {
  std::vector<int32_t> ids;
  const size_t first = input.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && input[first] == '[') {
    nlohmann::json array;
    try {
      array = nlohmann::json::parse(input);
    } catch (const nlohmann::json::parse_error& e) {
      throw_error(ErrorCode::kInvalidArgument, std::string("standard input: not a valid JSON array: ") + e.what());
    }
    for (size_t i = 0; i < array.size(); ++i) {
      const nlohmann::json& v = array[i];
      const std::string text = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      if (!v.is_number_integer()) bad_token(text, i, "is not a token id (expected an integer)");
      ids.push_back(parse_id(text, i, vocab_size));
    }
    return ids;
  }
  std::string token;
  const auto flush = [&] {
    if (!token.empty()) ids.push_back(parse_id(token, ids.size(), vocab_size));
    token.clear();
  };
  for (char c : input) {
    if (c == ' ' || c == ',' || c == '\n' || c == '\t' || c == '\r')
      flush();
    else
      token += c;
  }
  flush();
  return ids;
}

int run_detokenize(const DetokenizeOptions& o) {
  const Tokenizer tok = o.model_dir.empty() ? Tokenizer::gpt2() : Tokenizer::for_model_directory(o.model_dir);
  const std::vector<int32_t> ids = parse_ids(read_all_stdin(), tok.vocab_size());
  const std::string text = utf8::replace_invalid(tok.decode(ids));
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
    throw_error(ErrorCode::kIo, "cannot write the text to standard output");
  return 0;
}

}  // namespace

Subcommand add_detokenize_command(CLI::App& root) {
  auto o = std::make_shared<DetokenizeOptions>();
  CLI::App* app = root.add_subcommand("detokenize", "GPT-2 token ids on standard input to text");
  app->add_option("-m,--model", o->model_dir,
                  "Model directory whose tokenizer files to use (default: the built-in GPT-2 vocabulary)");
  return {app, [o] { return run_detokenize(*o); }};
}

}  // namespace eagerlm::cli
