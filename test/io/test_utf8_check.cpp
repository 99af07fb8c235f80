// utf8::first_invalid_offset (as the file readers use it) against an independent decoder: the reference below decodes
// code points arithmetically and applies the RFC 3629 rules (shortest form, no surrogates, <= U+10FFFF), while the
// implementation uses the byte-range table; they must agree on every string of up to three bytes and on random longer
// strings.
#include <catch2/catch.hpp>
#include <optional>
#include <random>

#include "engine/core/utf8.h"

namespace eagerlm::io {
namespace {

// The validator as the readers use it: the offset of the first bad byte, or nothing.
std::optional<size_t> find_invalid_utf8(std::string_view s) {
  const size_t at = utf8::first_invalid_offset(s);
  return at == std::string_view::npos ? std::nullopt : std::optional<size_t>(at);
}

std::optional<size_t> reference_first_invalid(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned b = static_cast<unsigned char>(s[i]);
    size_t len;
    uint32_t cp;
    if (b < 0x80) {
      len = 1;
      cp = b;
    } else if ((b & 0xE0) == 0xC0) {
      len = 2;
      cp = b & 0x1F;
    } else if ((b & 0xF0) == 0xE0) {
      len = 3;
      cp = b & 0x0F;
    } else if ((b & 0xF8) == 0xF0) {
      len = 4;
      cp = b & 0x07;
    } else
      return i;
    if (i + len > s.size()) return i;
    for (size_t k = 1; k < len; ++k) {
      const unsigned c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (c & 0x3F);
    }
    const uint32_t min_for_len[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_for_len[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return i;
    i += len;
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("UTF-8 validation agrees with a reference decoder on all short strings", "[io][utf8]") {
  std::string s;
  size_t mismatches = 0;
  for (uint32_t len = 1; len <= 3; ++len) {
    s.assign(len, '\0');
    for (uint32_t v = 0; v < (1u << (8 * len)); ++v) {
      for (uint32_t k = 0; k < len; ++k) s[k] = char((v >> (8 * k)) & 0xFF);
      if (find_invalid_utf8(s) != reference_first_invalid(s) && ++mismatches <= 5)
        FAIL_CHECK("mismatch on bytes " << v << " (length " << len << ")");
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("UTF-8 validation agrees with a reference decoder on random strings", "[io][utf8]") {
  std::mt19937 rng(Catch::rngSeed());
  // Draw bytes mostly from lead/continuation ranges so that long valid runs occur.
  const unsigned char interesting[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0,
                                       0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
  for (int trial = 0; trial < 200000; ++trial) {
    std::string s(1 + rng() % 12, '\0');
    for (char& c : s) c = char(interesting[rng() % sizeof interesting]);
    const auto got = find_invalid_utf8(s), want = reference_first_invalid(s);
    if (got != want) {
      FAIL("mismatch at trial " << trial);
    }
  }
  CHECK(!find_invalid_utf8("\xF0\x9F\x98\x80 ok \xF4\x8F\xBF\xBF"));  // U+1F600, U+10FFFF
  CHECK(find_invalid_utf8("ab\xF4\x90\x80\x80") == size_t(2));        // U+110000
}

}  // namespace eagerlm::io
