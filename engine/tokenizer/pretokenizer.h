// GPT-2's pre-tokenization: splits text into the pieces that BPE then encodes one by one, exactly
// as the regular expression
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// does (leftmost match, alternatives tried in order), without a regex engine: a single forward
// scan, linear in the text, with no recursion. Letter and number classes come from utf8proc's
// Unicode general categories; \s is Unicode White_Space.
#pragma once

#include <cstdint>
#include <string_view>

namespace eagerlm {

enum class CharClass : uint8_t {
  kLetter,      // \p{L}: Lu Ll Lt Lm Lo
  kNumber,      // \p{N}: Nd Nl No
  kWhitespace,  // \s: White_Space (Zs Zl Zp, U+0009..U+000D, U+0085)
  kOther,       // everything else, including bytes that are not valid UTF-8
};

CharClass classify(char32_t code_point);

// Iterates over the pieces of `text`; bytes that are not valid UTF-8 count as kOther characters
// of one byte each (callers validate first; this only keeps ill-formed input harmless).
class PreTokenizer {
 public:
  explicit PreTokenizer(std::string_view text) : text_(text) {}

  // Sets `piece` to the next piece and returns true, or returns false at the end of the text.
  bool next(std::string_view& piece);

 private:
  struct Char {
    uint32_t length;
    CharClass cls;
    char32_t code_point;
  };
  Char char_at(size_t pos) const;
  size_t skip_class(size_t pos, CharClass cls) const;  // end of the run of `cls` from pos
  size_t contraction_end(size_t pos) const;            // end of 's 't 're ... at pos, or pos
  size_t whitespace_end(size_t pos) const;             // end of \s+(?!\S)|\s+ at pos

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace eagerlm
