#include "engine/core/dtype.h"

#include "kernels/cpu/cpu_ops.h"

namespace eagerlm {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kF32: return "F32";
    case DType::kF16: return "F16";
    case DType::kBF16: return "BF16";
    case DType::kI32: return "I32";
    case DType::kI8: return "I8";
  }
  return "?";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  if (name == "F32") return DType::kF32;
  if (name == "F16") return DType::kF16;
  if (name == "BF16") return DType::kBF16;
  if (name == "I8") return DType::kI8;
  return std::nullopt;
}

std::optional<DType> dtype_from_cli_name(std::string_view name) {
  if (name == "f32") return DType::kF32;
  if (name == "f16") return DType::kF16;
  if (name == "bf16") return DType::kBF16;
  return std::nullopt;
}

void convert_to_f32(const void* src, DType from, float* dst, size_t n) {
  cpu::convert_to_f32(src, from, dst, int64_t(n));
}

void convert_from_f32(const float* src, DType to, void* dst, size_t n) {
  cpu::convert_from_f32(src, to, dst, int64_t(n));
}

}  // namespace eagerlm
