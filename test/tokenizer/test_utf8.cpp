// Invalid UTF-8: encode reports the byte offset by default, or replaces ill-formed sequences with
// U+FFFD exactly as Python's decode(errors="replace") does (expected strings below were produced
// by Python). Random byte strings are checked against the Table 3-7 reference in
// tokenizer_test_support.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/utf8.h"
#include "engine/tokenizer/tokenizer.h"
#include "test/tokenizer/tokenizer_test_support.h"

namespace {

using eagerlm::EncodeOptions;
using eagerlm::InvalidUtf8;
using eagerlm::Tokenizer;

const std::string R = "\xEF\xBF\xBD";  // U+FFFD
using eagerlm::test::reference_replace;
using eagerlm::test::reference_unit;

size_t reference_first_invalid(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto [len, valid] = reference_unit(s, i);
    if (!valid) return i;
    i += len;
  }
  return std::string::npos;
}

std::string random_bytes(std::mt19937& rng) {
  // Mostly bytes near the interesting boundaries so that valid multi-byte characters occur too.
  static const unsigned char kPicks[] = {'a',  ' ',  0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
                                         0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};
  std::string s(rng() % 16, '\0');
  for (char& c : s) c = char(rng() % 4 == 0 ? rng() % 256 : kPicks[rng() % sizeof kPicks]);
  return s;
}

EncodeOptions replacing() {
  EncodeOptions o;
  o.invalid_utf8 = InvalidUtf8::kReplace;
  return o;
}

}  // namespace

TEST_CASE("utf8: the four classic invalid inputs error with their byte offset", "[tokenizer][utf8]") {
  const Tokenizer tok = Tokenizer::gpt2();
  const std::vector<std::pair<std::string, size_t>> cases = {
      {"abc\x80", 3},                 // lone continuation byte
      {"x\xE2\x82", 1},               // truncated euro sign
      {"ok \xC0\xAF", 3},             // overlong '/'
      {"\xED\xA0\x80 surrogate", 0},  // encoded surrogate U+D800
  };
  for (const auto& [text, offset] : cases) {
    INFO("offset " << offset);
    try {
      tok.encode(text);
      FAIL("encode accepted invalid UTF-8");
    } catch (const eagerlm::Error& e) {
      CHECK(e.code() == eagerlm::ErrorCode::kInvalidArgument);
      CHECK_THAT(e.what(), Catch::Contains("byte offset " + std::to_string(offset)) && Catch::Contains("UTF-8"));
    }
  }
}

TEST_CASE("utf8: replacement matches Python's errors=\"replace\"", "[tokenizer][utf8]") {
  const Tokenizer tok = Tokenizer::gpt2();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\x80", R},
      {"\xE2\x82", R},
      {"\xC0\xAF", R + R},
      {"\xED\xA0\x80", R + R + R},
      {"\xF0\x9F\x98"
       "A",
       R + "A"},
      {"\xF4\x90\x80\x80", R + R + R + R},
      {"\xE0\x80\x80", R + R + R},
      {"a\xE2\x82\xAC"
       "b\xFF",
       "a\xE2\x82\xAC"
       "b" +
           R},
      {"\xE2\x82\xE2\x82\xAC", R + "\xE2\x82\xAC"},
  };
  for (const auto& [bytes, python] : cases) {
    CHECK(eagerlm::utf8::replace_invalid(bytes) == python);
    CHECK(tok.encode(bytes, replacing()) == tok.encode(python));
    CHECK(tok.decode(tok.encode(bytes, replacing())) == python);
  }
}

TEST_CASE("utf8: random bytes against the Table 3-7 reference; nothing throws unexpectedly", "[tokenizer][utf8]") {
  const Tokenizer tok = Tokenizer::gpt2();
  std::mt19937 rng(Catch::rngSeed());
  for (int trial = 0; trial < 20000; ++trial) {
    const std::string bytes = random_bytes(rng);
    INFO("trial " << trial);
    const std::string replaced = reference_replace(bytes);
    REQUIRE(eagerlm::utf8::replace_invalid(bytes) == replaced);
    const size_t bad = reference_first_invalid(bytes);
    REQUIRE(eagerlm::utf8::first_invalid_offset(bytes) == bad);
    REQUIRE(tok.decode(tok.encode(bytes, replacing())) == replaced);
    if (bad == std::string::npos) {
      REQUIRE(tok.decode(tok.encode(bytes)) == bytes);
    } else {
      REQUIRE_THROWS_WITH(tok.encode(bytes), Catch::Contains("byte offset " + std::to_string(bad)));
    }
  }
}

TEST_CASE("utf8: decode of every scalar value round-trips through append", "[tokenizer][utf8]") {
  for (char32_t cp = 0; cp < 0x110000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    std::string s;
    eagerlm::utf8::append(s, cp);
    const auto d = eagerlm::utf8::decode(reinterpret_cast<const unsigned char*>(s.data()), s.size());
    REQUIRE(d.status == eagerlm::utf8::Status::kValid);
    REQUIRE(d.code_point == cp);
    REQUIRE(d.length == s.size());
  }
}
