#include "engine/core/dtype.h"

namespace eagerlm {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kF32: return "F32";
    case DType::kF16: return "F16";
    case DType::kBF16: return "BF16";
    case DType::kI32: return "I32";
  }
  return "?";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  if (name == "F32") return DType::kF32;
  if (name == "F16") return DType::kF16;
  if (name == "BF16") return DType::kBF16;
  return std::nullopt;
}

std::optional<DType> dtype_from_cli_name(std::string_view name) {
  if (name == "f32") return DType::kF32;
  if (name == "f16") return DType::kF16;
  if (name == "bf16") return DType::kBF16;
  return std::nullopt;
}

float f16_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));  // inf / NaN
  if (exp != 0) return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return bits_float(sign);
  // Subnormal half: normalize into a float32 exponent.
  int e = -1;
  do {
    ++e;
    mant <<= 1;
  } while ((mant & 0x400u) == 0);
  return bits_float(sign | uint32_t(112 - e) << 23 | ((mant & 0x3ffu) << 13));
}

uint16_t float_to_f16(float f) {
  const uint32_t u = float_bits(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return uint16_t(sign | 0x7e00u);  // NaN
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to >= 65520: infinity
  if (abs < 0x38800000u) {
    // Result is subnormal (or zero): scale into the 10-bit mantissa with round-to-nearest-even.
    if (abs < 0x33000000u) return sign;  // below half the smallest subnormal
    const uint32_t exp = abs >> 23;
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14..24
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1u))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t r = abs - 0x38000000u;  // rebias exponent 127 -> 15
  r += 0xfffu + ((r >> 13) & 1u);   // round to nearest even
  return uint16_t(sign | (r >> 13));
}

// Checkpoint data need not be 2-byte aligned, so halves are loaded with memcpy.
static inline uint16_t load_u16(const void* base, size_t i) {
  uint16_t v;
  std::memcpy(&v, static_cast<const unsigned char*>(base) + 2 * i, 2);
  return v;
}

void convert_to_f32(const void* src, DType from, float* dst, size_t n) {
  switch (from) {
    case DType::kI32:
      for (size_t i = 0; i < n; ++i) {
        int32_t v;
        std::memcpy(&v, static_cast<const char*>(src) + 4 * i, 4);
        dst[i] = float(v);
      }
      return;
    case DType::kF32:
      std::memcpy(dst, src, n * 4);
      return;
    case DType::kF16:
      for (size_t i = 0; i < n; ++i) dst[i] = f16_to_float(load_u16(src, i));
      return;
    case DType::kBF16:
      for (size_t i = 0; i < n; ++i) dst[i] = bf16_to_float(load_u16(src, i));
      return;
  }
}

static inline void store_u16(void* base, size_t i, uint16_t v) {
  std::memcpy(static_cast<unsigned char*>(base) + 2 * i, &v, 2);
}

void convert_from_f32(const float* src, DType to, void* dst, size_t n) {
  switch (to) {
    case DType::kI32:
      for (size_t i = 0; i < n; ++i) {
        const int32_t v = int32_t(src[i]);
        std::memcpy(static_cast<char*>(dst) + 4 * i, &v, 4);
      }
      return;
    case DType::kF32:
      std::memcpy(dst, src, n * 4);
      return;
    case DType::kF16:
      for (size_t i = 0; i < n; ++i) store_u16(dst, i, float_to_f16(src[i]));
      return;
    case DType::kBF16:
      for (size_t i = 0; i < n; ++i) store_u16(dst, i, float_to_bf16(src[i]));
      return;
  }
}

}  // namespace eagerlm
