// Strict UTF-8 validation (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF),
// for safetensors headers and tensor names before they reach the JSON parser or a JSON writer.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace eagerlm::io {

// Offset of the first byte that starts an invalid or truncated sequence, or nullopt if valid.
std::optional<size_t> find_invalid_utf8(std::string_view bytes);

}  // namespace eagerlm::io
