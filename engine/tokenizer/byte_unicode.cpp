// The byte <-> stand-in character tables, computed once at compile time.
#include "engine/tokenizer/byte_unicode.h"

#include <array>

#include "engine/core/utf8.h"

namespace eagerlm {
namespace {

// Bytes that are printable Latin-1 characters keep their own code point.
constexpr bool stands_for_itself(int b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

constexpr std::array<char32_t, 256> make_byte_to_unicode() {
  std::array<char32_t, 256> table{};
  char32_t next_moved = 256;
  for (int b = 0; b < 256; ++b) table[b] = stands_for_itself(b) ? char32_t(b) : next_moved++;
  return table;
}

constexpr std::array<char32_t, 256> kByteToUnicode = make_byte_to_unicode();

// Every stand-in character is below U+0144 (256 + 68 moved bytes).
constexpr int kMaxStandIn = 256 + 68;

constexpr std::array<int16_t, kMaxStandIn> make_unicode_to_byte() {
  std::array<int16_t, kMaxStandIn> table{};
  for (auto& v : table) v = -1;
  for (int b = 0; b < 256; ++b) table[kByteToUnicode[b]] = int16_t(b);
  return table;
}

constexpr std::array<int16_t, kMaxStandIn> kUnicodeToByte = make_unicode_to_byte();

}  // namespace

char32_t byte_to_unicode(uint8_t byte) { return kByteToUnicode[byte]; }

int unicode_to_byte(char32_t code_point) {
  return code_point < char32_t(kMaxStandIn) ? kUnicodeToByte[code_point] : -1;
}

bool byte_level_decode(std::string_view spelled, std::string& bytes) {
  bytes.clear();
  const auto* p = reinterpret_cast<const unsigned char*>(spelled.data());
  size_t i = 0;
  while (i < spelled.size()) {
    const utf8::Decoded d = utf8::decode(p + i, spelled.size() - i);
    if (d.status != utf8::Status::kValid) return false;
    const int byte = unicode_to_byte(d.code_point);
    if (byte < 0) return false;
    bytes.push_back(static_cast<char>(byte));
    i += d.length;
  }
  return true;
}

std::string byte_level_encode(std::string_view bytes) {
  std::string spelled;
  spelled.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) utf8::append(spelled, byte_to_unicode(b));
  return spelled;
}

}  // namespace eagerlm
