// Shape, dtype and device checks shared by the op wrappers. A failed check is an eagerlm bug
// (the model passed a wrong tensor), reported as kInternal with the op's name.
#pragma once

#include <string>

#include "engine/core/error.h"
#include "engine/core/tensor.h"
#include "engine/core/weight_tensor.h"
#include "engine/ops/exec_context.h"

namespace eagerlm::ops::detail {

[[noreturn]] inline void op_failed(const char* op, const std::string& what) {
  throw_error(ErrorCode::kInternal, std::string("op ") + op + ": " + what);
}

}  // namespace eagerlm::ops::detail

// Fails the op unless `ok`; the message is built only when it fails (these checks run for every
// op of every decode step, and building their strings eagerly was ~1 % of an int8 step).
#define EAGERLM_OP_EXPECT(ok, op, what)                         \
  do {                                                          \
    if (!(ok)) ::eagerlm::ops::detail::op_failed((op), (what)); \
  } while (false)

namespace eagerlm::ops::detail {

// The tensor is F32 on the context's device.
inline void expect_f32_on(const ExecContext& ctx, const Tensor& t, const char* op, const char* name) {
  EAGERLM_OP_EXPECT(t.defined(), op, std::string(name) + " is undefined");
  EAGERLM_OP_EXPECT(t.dtype() == DType::kF32, op, std::string(name) + " must be F32, is " + t.describe());
  EAGERLM_OP_EXPECT(
      t.device() == ctx.device(), op,
      std::string(name) + " is on " + device_name(t.device()) + ", op runs on " + device_name(ctx.device()));
}

// A weight matrix in `layout` on the context's device: contiguous 2-D values of its type's dtype,
// and for int8 F32 scales of the shape weights.h gives (the kernels trust both).
inline void expect_weight(const ExecContext& ctx, const WeightTensor& w, WeightLayout layout, const char* op) {
  EAGERLM_OP_EXPECT(w.defined(), op, "weight is undefined");
  EAGERLM_OP_EXPECT(w.layout == layout, op, "weight has the wrong layout: " + w.data.describe());
  EAGERLM_OP_EXPECT(w.data.dtype() == storage_dtype(w.type), op,
                    std::string("weight of type ") + weight_type_name(w.type) + " holds " + w.data.describe());
  EAGERLM_OP_EXPECT(w.data.rank() == 2 && w.data.is_contiguous(), op,
                    "weight must be contiguous 2-D: " + w.data.describe());
  EAGERLM_OP_EXPECT(
      w.device() == ctx.device(), op,
      std::string("weight is on ") + device_name(w.device()) + ", op runs on " + device_name(ctx.device()));
  if (w.type != WeightType::kInt8) return;
  EAGERLM_OP_EXPECT(int8_shape_ok(w.type, w.inputs()), op,
                    "int8 weight inputs not a multiple of the block: " + w.data.describe());
  expect_f32_on(ctx, w.scales, op, "scales");
  EAGERLM_OP_EXPECT(w.scales.is_contiguous() && w.scales.shape() == scale_shape(w.data.shape(), layout), op,
                    "int8 scales " + w.scales.describe() + " do not fit weight " + w.data.describe());
}

// A 2-D tensor whose rows may be strided but whose columns are contiguous; returns the row stride.
inline int64_t row_stride(const Tensor& t, const char* op, const char* name) {
  EAGERLM_OP_EXPECT(t.rank() == 2, op, std::string(name) + " must be 2-D, is " + t.describe());
  EAGERLM_OP_EXPECT(t.stride(1) == 1 || t.size(1) == 1, op, std::string(name) + " columns must be contiguous");
  return t.size(0) > 1 ? t.stride(0) : t.size(1);
}

}  // namespace eagerlm::ops::detail
