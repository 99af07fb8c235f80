// The immutable tables behind a Tokenizer, shared by all copies of it and by all threads.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/tokenizer/bpe.h"

namespace eagerlm {

struct TokenizerData {
  std::vector<std::string> token_bytes;   // id -> raw bytes
  std::array<int32_t, 256> byte_token{};  // byte -> id of its single-byte token
  MergeTable merges;
  // Strings that encode to one id when EncodeOptions::parse_special is set, longest first.
  std::vector<std::pair<std::string, int32_t>> special_tokens;
  int32_t eos_id = -1;  // id of <|endoftext|>, -1 if the vocabulary has none
  std::string source;   // where the vocabulary came from, for messages
};

}  // namespace eagerlm
