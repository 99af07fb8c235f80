// Prompts as text to token ids, the same way for every front end (the C++ and C API, the CLI, the
// server): each is encoded with `options`; an empty prompt starts from the end-of-text token, as
// GPT-2's unconditional samples do; an encoding error names the prompt by its index in the batch
// (counted from 0) and keeps the tokenizer's explanation and error code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/tokenizer/tokenizer.h"

namespace eagerlm {

std::vector<std::vector<int32_t>> encode_prompts(const Tokenizer& tokenizer, const std::vector<std::string>& texts,
                                                 const EncodeOptions& options, int32_t eos_id);

}  // namespace eagerlm
