// Element types of tensors (kernels/common/dtype.h), their names, and bulk conversions. Compute
// is float32; F16 and BF16 are storage types (checkpoints, `eagerlm init --dtype`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "kernels/common/dtype.h"

namespace eagerlm {

// Name as safetensors spells it: "F32", "F16", "BF16".
const char* dtype_name(DType t);
std::optional<DType> dtype_from_name(std::string_view name);
// Name as the CLI spells it: "f32", "f16", "bf16".
std::optional<DType> dtype_from_cli_name(std::string_view name);

// Converts n elements of `src` (of type `from`) to float32.
void convert_to_f32(const void* src, DType from, float* dst, size_t n);
// Converts n float32 values to `to`, writing dtype_size(to)*n bytes.
void convert_from_f32(const float* src, DType to, void* dst, size_t n);

}  // namespace eagerlm
