// The element types a safetensors file may declare, by the names the format uses. eagerlm
// computes only with F32/F16/BF16, but a valid file may also hold other standard types (e.g. an
// I64 buffer), so the reader accepts every standard type whose size is known and rejects the
// rest (float8 variants, sub-byte types, anything unknown) as unsupported.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace eagerlm::io {

// Bytes per element of a standard safetensors dtype ("F32" -> 4, "BOOL" -> 1), or nullopt.
std::optional<size_t> safetensors_dtype_size(std::string_view name);

// The accepted names, comma-separated, for error messages.
const char* supported_safetensors_dtypes();

}  // namespace eagerlm::io
