// Validation and dispatch of the initializer's fills.
#include <string>

#include "engine/core/error.h"
#include "engine/ops/op_checks.h"
#include "engine/ops/ops.h"

namespace eagerlm::ops {

namespace {

void check_fill_target(const ExecContext& ctx, const Tensor& t, const char* op) {
  EAGERLM_OP_EXPECT(t.defined() && t.is_contiguous() && t.device() == ctx.device(), op,
                    "target must be a contiguous tensor on the op's device: " + t.describe());
  if (t.dtype() != DType::kF32 && t.dtype() != DType::kF16 && t.dtype() != DType::kBF16)
    throw_error(ErrorCode::kInvalidArgument,
                std::string(op) + ": parameters are F32, F16 or BF16, not " + dtype_name(t.dtype()));
}

}  // namespace

void fill_normal(const ExecContext& ctx, Tensor& t, rng::Key key, float stddev, uint64_t first_index) {
  check_fill_target(ctx, t, "fill_normal");
  ctx.queue().fill_normal(key, stddev, t.dtype(), t.raw(), t.numel(), first_index);
}

void fill_constant(const ExecContext& ctx, Tensor& t, float value) {
  check_fill_target(ctx, t, "fill_constant");
  ctx.queue().fill_constant(value, t.dtype(), t.raw(), t.numel());
}

}  // namespace eagerlm::ops
