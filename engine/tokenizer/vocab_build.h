// Turns a parsed vocabulary into TokenizerData, checking what the parsers cannot: ids unique and
// without gaps, all 256 byte tokens present, <|endoftext|> last in the base vocabulary (where
// GPT-2 puts it), and every merge's two parts and their concatenation in the vocabulary.
// Errors (kInvalidFile) name the source file and the entry or line.
#pragma once

#include <memory>
#include <string>

#include "engine/tokenizer/tokenizer_data.h"
#include "engine/tokenizer/vocab_parse.h"

namespace eagerlm {

inline constexpr std::string_view kEndOfText = "<|endoftext|>";

std::shared_ptr<const TokenizerData> build_tokenizer_data(const RawVocabulary& raw, std::string source);

}  // namespace eagerlm
