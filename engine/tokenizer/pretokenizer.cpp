// The GPT-2 pre-tokenizer as a hand-written scanner (see pretokenizer.h for the pattern).
#include "engine/tokenizer/pretokenizer.h"

#include <utf8proc.h>

#include <array>

#include "engine/core/utf8.h"

namespace eagerlm {
namespace {

CharClass classify_slow(char32_t cp) {
  if ((cp >= 0x09 && cp <= 0x0D) || cp == 0x85) return CharClass::kWhitespace;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: return CharClass::kLetter;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO: return CharClass::kNumber;
    case UTF8PROC_CATEGORY_ZS:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP: return CharClass::kWhitespace;
    default: return CharClass::kOther;
  }
}

// ASCII is nearly all of English text; a table avoids the utf8proc call for it.
const std::array<CharClass, 128>& ascii_classes() {
  static const std::array<CharClass, 128> table = [] {
    std::array<CharClass, 128> t{};
    for (char32_t c = 0; c < 128; ++c) t[c] = classify_slow(c);
    return t;
  }();
  return table;
}

}  // namespace

CharClass classify(char32_t code_point) {
  return code_point < 128 ? ascii_classes()[code_point] : classify_slow(code_point);
}

PreTokenizer::Char PreTokenizer::char_at(size_t pos) const {
  const auto* p = reinterpret_cast<const unsigned char*>(text_.data()) + pos;
  if (*p < 0x80) return {1, ascii_classes()[*p], *p};
  const utf8::Decoded d = utf8::decode(p, text_.size() - pos);
  if (d.status != utf8::Status::kValid) return {1, CharClass::kOther, 0xFFFD};
  return {d.length, classify_slow(d.code_point), d.code_point};
}

size_t PreTokenizer::skip_class(size_t pos, CharClass cls) const {
  const auto* p = reinterpret_cast<const unsigned char*>(text_.data());
  const auto& ascii = ascii_classes();
  const size_t n = text_.size();
  while (pos < n) {
    if (p[pos] < 0x80) {
      if (ascii[p[pos]] != cls) break;
      ++pos;
      continue;
    }
    const Char c = char_at(pos);
    if (c.cls != cls) break;
    pos += c.length;
  }
  return pos;
}

size_t PreTokenizer::contraction_end(size_t pos) const {
  // pos is at an apostrophe; the pattern's contractions are case-sensitive ASCII.
  const size_t n = text_.size();
  if (pos + 1 >= n) return pos;
  const char a = text_[pos + 1];
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return pos + 2;
  if (pos + 2 >= n) return pos;
  const char b = text_[pos + 2];
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return pos + 3;
  return pos;
}

size_t PreTokenizer::whitespace_end(size_t pos) const {
  // \s+(?!\S): the longest whitespace run that is not followed by a non-space. At the end of the
  // text that is the whole run; before a non-space it is the run minus its last character
  // (which then prefixes the next piece, or stands alone). A single whitespace character before
  // a non-space falls through to \s+ and is a piece of its own.
  const size_t n = text_.size();
  size_t last_char_start = pos;
  size_t end = pos;
  while (end < n) {
    const Char c = char_at(end);
    if (c.cls != CharClass::kWhitespace) break;
    last_char_start = end;
    end += c.length;
  }
  if (end == n || last_char_start == pos) return end;
  return last_char_start;
}

bool PreTokenizer::next(std::string_view& piece) {
  const size_t n = text_.size();
  if (pos_ >= n) return false;
  const size_t start = pos_;
  size_t end = start;

  if (text_[start] == '\'') end = contraction_end(start);
  if (end == start) {
    const Char first = char_at(start);
    if (first.code_point == ' ' && start + 1 < n) {
      // " ?X+" for X in letter, number, other: an optional single U+0020 before the run.
      const Char second = char_at(start + 1);
      if (second.cls != CharClass::kWhitespace) end = skip_class(start + 1 + second.length, second.cls);
    }
    if (end == start) {
      if (first.cls == CharClass::kWhitespace)
        end = whitespace_end(start);
      else
        end = skip_class(start + first.length, first.cls);
    }
  }
  piece = text_.substr(start, end - start);
  pos_ = end;
  return true;
}

}  // namespace eagerlm
