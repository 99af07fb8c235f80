// UTF-8 decoding, validation and U+FFFD replacement: the one validator of eagerlm (safetensors
// headers and names, shard indexes, tokenizer input, prompts). Well-formed means RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF.
// Ill-formed input is handled the way Python's `bytes.decode("utf-8", errors="replace")` does it
// (Unicode's "maximal subpart" rule): each maximal prefix of a would-be sequence becomes one U+FFFD.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace eagerlm::utf8 {

enum class Status : uint8_t {
  kValid,      // a well-formed character
  kInvalid,    // an ill-formed sequence (length = its maximal subpart, at least 1)
  kTruncated,  // a well-formed prefix cut off by the end of the buffer
};

struct Decoded {
  char32_t code_point;  // meaningful only when status == kValid
  uint32_t length;      // bytes consumed, always >= 1 when the buffer is not empty
  Status status;
};

// Decodes the character that starts at p[0]; `available` >= 1 bytes may be read.
Decoded decode(const unsigned char* p, size_t available);

// Offset of the first byte of the first ill-formed or truncated sequence; npos if all valid.
size_t first_invalid_offset(std::string_view text);

inline bool is_valid(std::string_view text) { return first_invalid_offset(text) == std::string_view::npos; }

// Explains what is wrong at `offset` (from first_invalid_offset), e.g. "byte 0x80 ... ".
std::string describe_invalid(std::string_view text, size_t offset);

// `text` with each maximal ill-formed subpart replaced by U+FFFD (EF BF BD).
std::string replace_invalid(std::string_view text);

// Appends the UTF-8 encoding of a Unicode scalar value.
void append(std::string& out, char32_t code_point);

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

}  // namespace eagerlm::utf8
