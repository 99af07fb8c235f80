// Element types of tensors and their conversions. Compute is float32; F16 and BF16 are storage
// types (checkpoints, `eagerlm init --dtype`), converted with round-to-nearest-even.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace eagerlm {

// kI32 holds token ids, positions and lengths; it is never a parameter type.
enum class DType : uint8_t { kF32, kF16, kBF16, kI32 };

constexpr size_t dtype_size(DType t) { return t == DType::kF16 || t == DType::kBF16 ? 2 : 4; }
// Name as safetensors spells it: "F32", "F16", "BF16".
const char* dtype_name(DType t);
std::optional<DType> dtype_from_name(std::string_view name);
// Name as the CLI spells it: "f32", "f16", "bf16".
std::optional<DType> dtype_from_cli_name(std::string_view name);

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float bf16_to_float(uint16_t h) { return bits_float(uint32_t(h) << 16); }
inline uint16_t float_to_bf16(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);                                         // round to nearest even
  return uint16_t(u >> 16);
}

float f16_to_float(uint16_t h);
uint16_t float_to_f16(float f);

// Converts n elements of `src` (of type `from`) to float32.
void convert_to_f32(const void* src, DType from, float* dst, size_t n);
// Converts n float32 values to `to`, writing dtype_size(to)*n bytes.
void convert_from_f32(const float* src, DType to, void* dst, size_t n);

}  // namespace eagerlm
