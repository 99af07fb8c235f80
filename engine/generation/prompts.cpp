#include "engine/generation/prompts.h"

#include "engine/core/error.h"

namespace eagerlm {

std::vector<std::vector<int32_t>> encode_prompts(const Tokenizer& tokenizer, const std::vector<std::string>& texts,
                                                 const EncodeOptions& options, int32_t eos_id) {
  std::vector<std::vector<int32_t>> out;
  out.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    try {
      out.push_back(tokenizer.encode(texts[i], options));
    } catch (const Error& e) {
      throw Error(e.code(), "prompt " + std::to_string(i) + ": " + e.what());
    }
    if (out.back().empty()) {
      if (eos_id < 0 || eos_id >= tokenizer.vocab_size())
        throw Error(ErrorCode::kInvalidArgument, "prompt " + std::to_string(i) +
                                                     " is empty, and the model has no end-of-text token to start from "
                                                     "(eos_token_id " + std::to_string(eos_id) + ")");
      out.back().push_back(eos_id);
    }
  }
  return out;
}

}  // namespace eagerlm
