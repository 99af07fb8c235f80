// A weight matrix as the engine holds it: its stored values in one of the kernels' weight types
// (kernels/common/weights.h) and, for int8, the F32 scale tensor beside them. The matrix is 2-D
// in one of the layouts the kernels know: input-major [in, out] (GPT-2's Conv1D weights, for
// linear), output-major [out, in] (the tied embedding wte, for the output head and row gathers),
// or panels, a tensor [⌈out/32⌉, 32·in] (for linear where the backend prefers it: Backend::
// linear_layout; `panel_outputs` says how many outputs the padded panels hold). Cheap to copy: it
// shares its tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "engine/core/tensor.h"
#include "kernels/common/weights.h"

namespace eagerlm {

struct WeightTensor {
  WeightType type = WeightType::kF32;
  WeightLayout layout = WeightLayout::kInputMajor;
  Tensor data;                // [rows, cols] of storage_dtype(type), contiguous
  Tensor scales;              // int8 only: F32, scale_shape(...); undefined otherwise
  int64_t panel_outputs = 0;  // kPanels only: the outputs (the last panel is zero-padded past them)

  bool defined() const { return data.defined(); }
  Device device() const { return data.device(); }
  int64_t inputs() const {
    return layout == WeightLayout::kInputMajor    ? data.size(0)
           : layout == WeightLayout::kOutputMajor ? data.size(1)
                                                  : data.size(1) / kPanelColumns;
  }
  int64_t outputs() const {
    return layout == WeightLayout::kInputMajor    ? data.size(1)
           : layout == WeightLayout::kOutputMajor ? data.size(0)
                                                  : panel_outputs;
  }
  // Bytes one pass over the matrix reads: values plus scales.
  size_t bytes() const { return data.nbytes() + (scales.defined() ? scales.nbytes() : 0); }
  // Raw pointers for the kernels.
  Weights view() const {
    return {type, data.raw(), scales.defined() ? static_cast<const float*>(scales.raw()) : nullptr};
  }
  // A float32 tensor as a weight of type kF32 (no copy).
  static WeightTensor of_f32(const Tensor& t, WeightLayout layout) { return {WeightType::kF32, layout, t, {}}; }
};

// The tensor dtype a weight type is stored in (F32, BF16, F16, I8), and back (nullopt for I32).
constexpr DType storage_dtype(WeightType t) {
  return t == WeightType::kF32    ? DType::kF32
         : t == WeightType::kBF16 ? DType::kBF16
         : t == WeightType::kF16  ? DType::kF16
                                  : DType::kI8;
}
std::optional<WeightType> weight_type_of(DType dtype);
// "f32", "bf16", "f16", "int8" (weight_type_name's spelling).
std::optional<WeightType> weight_type_from_name(std::string_view name);

// The scale tensor's shape for an int8 matrix of `shape` in `layout`: [in/32, out] input-major,
// [out, in/32] output-major, [⌈out/32⌉, in] in panels (weights.h).
Shape scale_shape(const Shape& shape, WeightLayout layout);

}  // namespace eagerlm
