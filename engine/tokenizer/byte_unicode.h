// GPT-2's reversible byte <-> character mapping. GPT-2 vocabulary files spell every token as a
// string of 256 stand-in characters, one per byte: printable Latin-1 bytes stand for themselves and
// the others (controls, space, 0x7F-0xA0, 0xAD) are moved to U+0100 onwards, in byte order.
// eagerlm decodes vocabulary entries back to raw bytes once, at load time, and then works on bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace eagerlm {

// The stand-in character for a byte (e.g. 0x20 -> U+0120 'Ġ', 0x41 -> 'A').
char32_t byte_to_unicode(uint8_t byte);

// The byte a stand-in character stands for, or -1 if the character is not one of the 256.
int unicode_to_byte(char32_t code_point);

// Decodes a vocabulary entry spelled in stand-in characters into `bytes`. Returns false (and
// leaves `bytes` unspecified) if `spelled` is not valid UTF-8 or has a character outside the 256.
bool byte_level_decode(std::string_view spelled, std::string& bytes);

// Spells raw bytes in stand-in characters (the inverse of byte_level_decode).
std::string byte_level_encode(std::string_view bytes);

}  // namespace eagerlm
