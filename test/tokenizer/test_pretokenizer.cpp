// Pre-tokenization: each rule of GPT-2's pattern and its edge cases (expected splits taken from
// Python's `regex` module running GPT-2's pattern), and random strings compared against a
// reference matcher that tries the pattern's alternatives in order with backtracking, on code
// points, the way a regex engine does.
#include <utf8proc.h>
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "engine/core/utf8.h"
#include "engine/tokenizer/pretokenizer.h"

namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> pieces;
  eagerlm::PreTokenizer pre(text);
  std::string_view piece;
  while (pre.next(piece)) pieces.emplace_back(piece);
  return pieces;
}

using Pieces = std::vector<std::string>;

// ---- reference: the pattern's alternatives, tried in order at each position ----

std::vector<char32_t> code_points(const std::string& s) {
  std::vector<char32_t> cps;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t i = 0; i < s.size();) {
    utf8proc_int32_t cp = 0;
    const auto n = utf8proc_iterate(p + i, utf8proc_ssize_t(s.size() - i), &cp);
    REQUIRE(n > 0);
    cps.push_back(char32_t(cp));
    i += size_t(n);
  }
  return cps;
}

bool ref_letter(char32_t c) {
  const auto cat = utf8proc_category(utf8proc_int32_t(c));
  return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT ||
         cat == UTF8PROC_CATEGORY_LM || cat == UTF8PROC_CATEGORY_LO;
}
bool ref_number(char32_t c) {
  const auto cat = utf8proc_category(utf8proc_int32_t(c));
  return cat == UTF8PROC_CATEGORY_ND || cat == UTF8PROC_CATEGORY_NL || cat == UTF8PROC_CATEGORY_NO;
}
// Unicode's White_Space property (PropList.txt), listed.
bool ref_space(char32_t c) {
  static const char32_t kWhite[] = {0x09,   0x0A,   0x0B,   0x0C,   0x0D,   0x20,   0x85,   0xA0,   0x1680,
                                    0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008,
                                    0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000};
  for (char32_t w : kWhite)
    if (c == w) return true;
  return false;
}
bool ref_other(char32_t c) { return !ref_space(c) && !ref_letter(c) && !ref_number(c); }

// Length of the match of the pattern at i (in code points); the pattern always matches >= 1.
size_t ref_match(const std::vector<char32_t>& s, size_t i) {
  const size_t n = s.size();
  for (const char* c : {"s", "t", "re", "ve", "m", "ll", "d"}) {
    const std::string suffix = c;
    bool ok = s[i] == U'\'' && i + 1 + suffix.size() <= n;
    for (size_t k = 0; ok && k < suffix.size(); ++k) ok = s[i + 1 + k] == char32_t(suffix[k]);
    if (ok) return 1 + suffix.size();
  }
  for (bool (*cls)(char32_t) : {ref_letter, ref_number, ref_other}) {
    // " ?X+": greedy optional space first, then without it.
    for (size_t start : {i + 1, i}) {
      if (start == i + 1 && s[i] != U' ') continue;
      size_t j = start;
      while (j < n && cls(s[j])) ++j;
      if (j > start) return j - i;
    }
  }
  size_t run = 0;
  while (i + run < n && ref_space(s[i + run])) ++run;
  for (size_t len = run; len >= 1; --len)  // \s+(?!\S), backtracking
    if (i + len == n || ref_space(s[i + len])) return len;
  return run;  // \s+
}

Pieces reference_split(const std::string& text) {
  const auto cps = code_points(text);
  Pieces pieces;
  for (size_t i = 0; i < cps.size();) {
    const size_t len = ref_match(cps, i);
    std::string piece;
    for (size_t k = i; k < i + len; ++k) eagerlm::utf8::append(piece, cps[k]);
    pieces.push_back(piece);
    i += len;
  }
  return pieces;
}

}  // namespace

TEST_CASE("pretokenizer: contractions", "[tokenizer][pretokenizer]") {
  CHECK(split("it's") == Pieces{"it", "'s"});
  CHECK(split("we're they've I'm you'll he'd don't") ==
        Pieces{"we", "'re", " they", "'ve", " I", "'m", " you", "'ll", " he", "'d", " don", "'t"});
  CHECK(split("IT'S") == Pieces{"IT", "'", "S"});  // case-sensitive
  CHECK(split("'s's's") == Pieces{"'s", "'s", "'s"});
  CHECK(split("''s") == Pieces{"''", "s"});
  CHECK(split("x 's") == Pieces{"x", " '", "s"});  // no space before a contraction
  CHECK(split("!'s") == Pieces{"!'", "s"});        // inside a punctuation run
  CHECK(split("'ll'") == Pieces{"'ll", "'"});
  CHECK(split("'re'") == Pieces{"'re", "'"});
  CHECK(split("'L") == Pieces{"'", "L"});
  CHECK(split("'") == Pieces{"'"});
  CHECK(split("a'") == Pieces{"a", "'"});
  CHECK(split("1'2") == Pieces{"1", "'", "2"});
}

TEST_CASE("pretokenizer: letters with an optional leading space", "[tokenizer][pretokenizer]") {
  CHECK(split("Hello world") == Pieces{"Hello", " world"});
  CHECK(split("caf\u00e9") == Pieces{"caf\u00e9"});
  CHECK(split("\u0645\u0631\u062d\u0628\u0627") == Pieces{"\u0645\u0631\u062d\u0628\u0627"});  // Arabic
  CHECK(split("\u4f60\u597d\u4e16\u754c") == Pieces{"\u4f60\u597d\u4e16\u754c"});              // CJK (Lo)
  CHECK(split("e\u0301") == Pieces{"e", "\u0301"});  // a combining mark (Mn) is not \p{L}
  CHECK(split("\u0301a") == Pieces{"\u0301", "a"});
  CHECK(split("x\u00a0y") == Pieces{"x", "\u00a0", "y"});  // only U+0020 may prefix
  CHECK(split("  hello") == Pieces{" ", " hello"});
  CHECK(split("\n hello") == Pieces{"\n", " hello"});
}

TEST_CASE("pretokenizer: numbers", "[tokenizer][pretokenizer]") {
  CHECK(split("abc123def") == Pieces{"abc", "123", "def"});
  CHECK(split(" 123") == Pieces{" 123"});
  CHECK(split("1.5") == Pieces{"1", ".", "5"});
  CHECK(split("\u00bd\u00b2\u2167") == Pieces{"\u00bd\u00b2\u2167"});  // No, No, Nl
}

TEST_CASE("pretokenizer: other characters", "[tokenizer][pretokenizer]") {
  CHECK(split("hello!!!") == Pieces{"hello", "!!!"});
  CHECK(split(" ...") == Pieces{" ..."});
  CHECK(split(" '") == Pieces{" '"});
  CHECK(split("emoji \U0001F600\U0001F600 ok") == Pieces{"emoji", " \U0001F600\U0001F600", " ok"});
  CHECK(split("\u200bx") == Pieces{"\u200b", "x"});    // ZERO WIDTH SPACE is not White_Space
  CHECK(split("x\x1cy") == Pieces{"x", "\x1c", "y"});  // U+001C is not White_Space either
}

TEST_CASE("pretokenizer: whitespace runs", "[tokenizer][pretokenizer]") {
  CHECK(split("a  b") == Pieces{"a", " ", " b"});
  CHECK(split("a   b") == Pieces{"a", "  ", " b"});
  CHECK(split("a\n\nb") == Pieces{"a", "\n", "\n", "b"});
  CHECK(split("a \n b") == Pieces{"a", " \n", " b"});
  CHECK(split("trailing   ") == Pieces{"trailing", "   "});
  CHECK(split(" ") == Pieces{" "});
  CHECK(split("  ") == Pieces{"  "});
  CHECK(split("\t") == Pieces{"\t"});
  CHECK(split("a\tb") == Pieces{"a", "\t", "b"});
  CHECK(split("a \tb") == Pieces{"a", " ", "\t", "b"});
  CHECK(split(" \t b") == Pieces{" \t", " b"});
  CHECK(split("\u00a0\u00a0x") == Pieces{"\u00a0", "\u00a0", "x"});
  CHECK(split("x \u00a0 y") == Pieces{"x", " \u00a0", " y"});
  CHECK(split("a\u2028b") == Pieces{"a", "\u2028", "b"});
  CHECK(split("\u3000x") == Pieces{"\u3000", "x"});
  CHECK(split("\u0085x") == Pieces{"\u0085", "x"});
  CHECK(split("   \n") == Pieces{"   \n"});
  CHECK(split("") == Pieces{});
}

TEST_CASE("pretokenizer: character classes", "[tokenizer][pretokenizer]") {
  using eagerlm::CharClass;
  using eagerlm::classify;
  CHECK(classify(U'a') == CharClass::kLetter);
  CHECK(classify(0x01C5) == CharClass::kLetter);  // Lt
  CHECK(classify(0x02B0) == CharClass::kLetter);  // Lm
  CHECK(classify(U'7') == CharClass::kNumber);
  CHECK(classify(0x0663) == CharClass::kNumber);  // ARABIC-INDIC DIGIT THREE
  CHECK(classify(0x2167) == CharClass::kNumber);  // ROMAN NUMERAL EIGHT (Nl)
  CHECK(classify(0x1680) == CharClass::kWhitespace);
  CHECK(classify(0x2029) == CharClass::kWhitespace);
  CHECK(classify(0x180E) == CharClass::kOther);  // MONGOLIAN VOWEL SEPARATOR: no longer a space
  CHECK(classify(0xFEFF) == CharClass::kOther);
  CHECK(classify(U'_') == CharClass::kOther);
  for (char32_t c = 0; c < 0x30000; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    const CharClass expected = ref_space(c)    ? CharClass::kWhitespace
                               : ref_letter(c) ? CharClass::kLetter
                               : ref_number(c) ? CharClass::kNumber
                                               : CharClass::kOther;
    if (classify(c) != expected) FAIL("class of U+" << std::hex << uint32_t(c));
  }
}

TEST_CASE("pretokenizer: random strings match the backtracking reference", "[tokenizer][pretokenizer]") {
  // An alphabet dense in the characters the rules treat specially.
  const std::vector<std::string> alphabet = {
      " ", " ", " ",      "\n",     "\t", "\r", "\u00a0", "\u3000", "\u2028", "'",          "'",      "s",
      "t", "r", "e",      "v",      "m",  "l",  "d",      "L",      "a",      "Z",          "\u00e9", "\u4f60",
      "1", "9", "\u00bd", "\u0663", ".",  "!",  "-",      "_",      "\u0301", "\U0001F600", "\u200b", "\x1c"};
  std::mt19937 rng(Catch::rngSeed());
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text;
    const int len = int(rng() % 24);
    for (int k = 0; k < len; ++k) text += alphabet[rng() % alphabet.size()];
    INFO("text: " << text);
    const Pieces pieces = split(text);
    REQUIRE(pieces == reference_split(text));
    std::string joined;
    for (const auto& p : pieces) joined += p;
    REQUIRE(joined == text);
  }
}

TEST_CASE("pretokenizer: invalid bytes are single-byte pieces of 'other' and never lost", "[tokenizer][pretokenizer]") {
  std::mt19937 rng(Catch::rngSeed());
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bytes(rng() % 40, '\0');
    for (char& b : bytes) b = char(rng() % 256);
    std::string joined;
    for (const auto& p : split(bytes)) {
      REQUIRE(!p.empty());
      joined += p;
    }
    REQUIRE(joined == bytes);
  }
}
