#include "engine/core/weight_tensor.h"

namespace eagerlm {

std::optional<WeightType> weight_type_of(DType dtype) {
  switch (dtype) {
    case DType::kF32: return WeightType::kF32;
    case DType::kBF16: return WeightType::kBF16;
    case DType::kF16: return WeightType::kF16;
    case DType::kI8: return WeightType::kInt8;
    case DType::kI32: break;
  }
  return std::nullopt;
}

std::optional<WeightType> weight_type_from_name(std::string_view name) {
  for (WeightType t : {WeightType::kF32, WeightType::kBF16, WeightType::kF16, WeightType::kInt8})
    if (name == weight_type_name(t)) return t;
  return std::nullopt;
}

Shape scale_shape(const Shape& shape, WeightLayout layout) {
  if (layout == WeightLayout::kInputMajor) return Shape{shape[0] / kInt8Block, shape[1]};
  // Output-major [n, k] and panels [⌈n/32⌉, 32·k] alike: k/32 blocks per row of data.
  return Shape{shape[0], shape[1] / kInt8Block};
}

}  // namespace eagerlm
