// UTF-8 decoding per Unicode's table of well-formed byte sequences (Table 3-7).
#include "engine/core/utf8.h"

#include <cstdio>
#include <cstring>

namespace eagerlm::utf8 {

Decoded decode(const unsigned char* p, size_t available) {
  const unsigned char lead = p[0];
  if (lead < 0x80) return {lead, 1, Status::kValid};

  // Number of continuation bytes, and the allowed range of the first one (it is narrower after
  // E0, ED, F0 and F4 to exclude overlong forms, surrogates and values above U+10FFFF).
  uint32_t continuation = 0;
  unsigned char low = 0x80, high = 0xBF;
  char32_t cp = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    continuation = 1;
    cp = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    continuation = 2;
    cp = lead & 0x0F;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    continuation = 3;
    cp = lead & 0x07;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return {0, 1, Status::kInvalid};  // 80..C1 and F5..FF never start a character
  }

  for (uint32_t k = 1; k <= continuation; ++k) {
    if (k >= available) return {0, k, Status::kTruncated};
    const unsigned char b = p[k];
    if (b < low || b > high) return {0, k, Status::kInvalid};
    cp = (cp << 6) | (b & 0x3F);
    low = 0x80;
    high = 0xBF;
  }
  return {cp, continuation + 1, Status::kValid};
}

size_t first_invalid_offset(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    // Skip ASCII eight bytes at a time: prose is mostly ASCII.
    while (i + 8 <= n) {
      uint64_t word;
      std::memcpy(&word, p + i, 8);
      if (word & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= n) break;
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    const Decoded d = decode(p + i, n - i);
    if (d.status != Status::kValid) return i;
    i += d.length;
  }
  return std::string_view::npos;
}

std::string describe_invalid(std::string_view text, size_t offset) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data()) + offset;
  const Decoded d = decode(p, text.size() - offset);
  const auto hex = [](unsigned char b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02X", b);
    return std::string(buf);
  };
  const unsigned char lead = p[0];
  const std::string what = "byte " + hex(lead) + " at byte offset " + std::to_string(offset);
  if (d.status == Status::kTruncated)
    return what + " starts a multi-byte character that the text ends before completing";
  if (lead >= 0x80 && lead <= 0xBF) return what + " is a continuation byte without a lead byte";
  if (lead == 0xC0 || lead == 0xC1) return what + " starts an overlong encoding";
  if (lead >= 0xF5) return what + " never occurs in UTF-8";
  const unsigned char next = p[d.length];  // the byte that does not fit (d.length < available)
  if ((lead == 0xE0 && next < 0xA0) || (lead == 0xF0 && next < 0x90)) return what + " starts an overlong encoding";
  if (lead == 0xED && next >= 0xA0) return what + " starts an encoded surrogate (U+D800..U+DFFF)";
  if (lead == 0xF4 && next >= 0x90) return what + " starts a code point above U+10FFFF";
  return what + " starts a multi-byte character but byte " + hex(next) + " at offset " +
         std::to_string(offset + d.length) + " does not continue it";
}

std::string replace_invalid(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const Decoded d = decode(p + i, n - i);
    if (d.status == Status::kValid)
      out.append(text.data() + i, d.length);
    else
      out.append(kReplacementCharacter);
    i += d.length;
  }
  return out;
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace eagerlm::utf8
