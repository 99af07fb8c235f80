// Validation and device dispatch for the dense ops (linear with float32 or typed weights, norms,
// activations, embedding).
#include <initializer_list>

#include "engine/core/weight_convert.h"
#include "engine/ops/op_checks.h"
#include "engine/ops/ops.h"

namespace eagerlm::ops {

using detail::expect_f32_on;
using detail::expect_weight;
using detail::row_stride;

namespace {

// The bias's data (null when it is undefined), checked to be n contiguous floats on the device.
const float* bias_of(const ExecContext& ctx, const Tensor& bias, int64_t n, const char* op) {
  if (!bias.defined()) return nullptr;
  expect_f32_on(ctx, bias, op, "bias");
  EAGERLM_OP_EXPECT(bias.numel() == n && bias.is_contiguous(), op, "bias must be [n]: " + bias.describe());
  return bias.f32();
}

}  // namespace

void linear(const ExecContext& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y) {
  const char* op = "linear";
  for (const Tensor* t : std::initializer_list<const Tensor*>{&x, &w, &y}) expect_f32_on(ctx, *t, op, "operand");
  const int64_t ldx = row_stride(x, op, "x"), ldy = row_stride(y, op, "y");
  EAGERLM_OP_EXPECT(w.rank() == 2 && w.is_contiguous(), op, "w must be contiguous 2-D: " + w.describe());
  const int64_t m = x.size(0), k = x.size(1), n = w.size(1);
  EAGERLM_OP_EXPECT(
      w.size(0) == k && y.size(0) == m && y.size(1) == n, op,
      "shapes x " + x.shape().to_string() + " w " + w.shape().to_string() + " y " + y.shape().to_string());
  const float* b = bias_of(ctx, bias, n, op);
  ctx.queue().linear(x.f32(), ldx, w.f32(), b, y.f32(), ldy, m, k, n);
}

void linear_transposed(const ExecContext& ctx, const Tensor& x, const Tensor& w, Tensor& y) {
  const char* op = "linear_transposed";
  for (const Tensor* t : std::initializer_list<const Tensor*>{&x, &w, &y}) expect_f32_on(ctx, *t, op, "operand");
  const int64_t ldx = row_stride(x, op, "x"), ldy = row_stride(y, op, "y");
  EAGERLM_OP_EXPECT(w.rank() == 2 && w.is_contiguous(), op, "w must be contiguous 2-D: " + w.describe());
  const int64_t m = x.size(0), k = x.size(1), n = w.size(0);
  EAGERLM_OP_EXPECT(
      w.size(1) == k && y.size(0) == m && y.size(1) == n, op,
      "shapes x " + x.shape().to_string() + " w " + w.shape().to_string() + " y " + y.shape().to_string());
  ctx.queue().linear_transposed(x.f32(), ldx, w.f32(), y.f32(), ldy, m, k, n);
}

namespace {

// A layer the loader chose to hold in panels (Backend::linear_layout).
void linear_panels(const ExecContext& ctx, const Tensor& x, const WeightTensor& w, const Tensor& bias, Tensor& y) {
  const char* op = "linear (panels)";
  expect_f32_on(ctx, x, op, "x");
  expect_f32_on(ctx, y, op, "y");
  expect_weight(ctx, w, WeightLayout::kPanels, op);
  const int64_t ldx = row_stride(x, op, "x"), ldy = row_stride(y, op, "y");
  const int64_t m = x.size(0), k = x.size(1), n = w.outputs();
  EAGERLM_OP_EXPECT(
      w.inputs() == k && panels_fit(w.type, k) && y.size(0) == m && y.size(1) == n, op,
      "shapes x " + x.shape().to_string() + " w " + w.data.shape().to_string() + " y " + y.shape().to_string());
  const float* b = bias_of(ctx, bias, n, op);
  ctx.queue().linear_panels(x.f32(), ldx, w.view(), b, y.f32(), ldy, m, k, n);
}

}  // namespace

void linear(const ExecContext& ctx, const Tensor& x, const WeightTensor& w, const Tensor& bias, Tensor& y) {
  if (w.layout == WeightLayout::kPanels) return linear_panels(ctx, x, w, bias, y);
  if (w.layout == WeightLayout::kOutputMajor) {
    // A layer the loader chose to hold output-major (Backend::linear_layout): the
    // head's product, then the bias row by row.
    linear_transposed(ctx, x, w, y);
    const char* op = "linear (output-major)";
    const int64_t n = y.size(1), ldy = row_stride(y, op, "y");
    const float* b = bias_of(ctx, bias, n, op);
    if (b)
      for (int64_t r = 0; r < y.size(0); ++r) ctx.queue().add(y.f32() + r * ldy, b, y.f32() + r * ldy, n);
    return;
  }
  if (w.type == WeightType::kF32) return linear(ctx, x, w.data, bias, y);
  const char* op = "linear (typed)";
  expect_f32_on(ctx, x, op, "x");
  expect_f32_on(ctx, y, op, "y");
  expect_weight(ctx, w, WeightLayout::kInputMajor, op);
  const int64_t ldx = row_stride(x, op, "x"), ldy = row_stride(y, op, "y");
  const int64_t m = x.size(0), k = x.size(1), n = w.outputs();
  EAGERLM_OP_EXPECT(
      w.inputs() == k && y.size(0) == m && y.size(1) == n, op,
      "shapes x " + x.shape().to_string() + " w " + w.data.shape().to_string() + " y " + y.shape().to_string());
  const float* b = bias_of(ctx, bias, n, op);
  ctx.queue().linear_typed(x.f32(), ldx, w.view(), b, y.f32(), ldy, m, k, n);
}

void linear_transposed(const ExecContext& ctx, const Tensor& x, const WeightTensor& w, Tensor& y) {
  if (w.type == WeightType::kF32) return linear_transposed(ctx, x, w.data, y);
  const char* op = "linear_transposed (typed)";
  expect_f32_on(ctx, x, op, "x");
  expect_f32_on(ctx, y, op, "y");
  expect_weight(ctx, w, WeightLayout::kOutputMajor, op);
  const int64_t ldx = row_stride(x, op, "x"), ldy = row_stride(y, op, "y");
  const int64_t m = x.size(0), k = x.size(1), n = w.outputs();
  EAGERLM_OP_EXPECT(
      w.inputs() == k && y.size(0) == m && y.size(1) == n, op,
      "shapes x " + x.shape().to_string() + " w " + w.data.shape().to_string() + " y " + y.shape().to_string());
  ctx.queue().linear_transposed_typed(x.f32(), ldx, w.view(), y.f32(), ldy, m, k, n);
}

void layer_norm(const ExecContext& ctx, const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                float eps) {
  const char* op = "layer_norm";
  for (const Tensor* t : std::initializer_list<const Tensor*>{&x, &gamma, &beta, &y})
    expect_f32_on(ctx, *t, op, "operand");
  EAGERLM_OP_EXPECT(x.rank() == 2 && x.is_contiguous() && y.shape() == x.shape() && y.is_contiguous(), op,
                    "x and y must be contiguous [rows, cols]: " + x.describe() + ", " + y.describe());
  const int64_t rows = x.size(0), cols = x.size(1);
  EAGERLM_OP_EXPECT(gamma.numel() == cols && beta.numel() == cols, op, "gamma/beta must be [cols]");
  ctx.queue().layer_norm(x.f32(), gamma.f32(), beta.f32(), y.f32(), rows, cols, eps);
}

void gelu(const ExecContext& ctx, const Tensor& x, Tensor& y) {
  const char* op = "gelu";
  expect_f32_on(ctx, x, op, "x");
  expect_f32_on(ctx, y, op, "y");
  EAGERLM_OP_EXPECT(x.is_contiguous() && y.is_contiguous() && x.numel() == y.numel(), op, "x, y contiguous, same size");
  ctx.queue().gelu(x.f32(), y.f32(), x.numel());
}

void add(const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor& y) {
  const char* op = "add";
  for (const Tensor* t : std::initializer_list<const Tensor*>{&a, &b, &y}) expect_f32_on(ctx, *t, op, "operand");
  EAGERLM_OP_EXPECT(
      a.is_contiguous() && b.is_contiguous() && y.is_contiguous() && a.numel() == b.numel() && a.numel() == y.numel(),
      op, "a, b, y contiguous, same size");
  ctx.queue().add(a.f32(), b.f32(), y.f32(), a.numel());
}

void embedding(const ExecContext& ctx, const Tensor& ids, const Tensor& positions, const Tensor& wte, const Tensor& wpe,
               Tensor& y) {
  expect_f32_on(ctx, wte, "embedding", "wte");
  embedding(ctx, ids, positions, WeightTensor::of_f32(wte, WeightLayout::kOutputMajor), wpe, y);
}

void embedding(const ExecContext& ctx, const Tensor& ids, const Tensor& positions, const WeightTensor& wte,
               const Tensor& wpe, Tensor& y) {
  const char* op = "embedding";
  EAGERLM_OP_EXPECT(ids.dtype() == DType::kI32 && positions.dtype() == DType::kI32, op, "ids/positions must be I32");
  EAGERLM_OP_EXPECT(ids.device() == ctx.device() && positions.device() == ctx.device(), op, "ids/positions device");
  expect_weight(ctx, wte, WeightLayout::kOutputMajor, op);
  for (const Tensor* t : std::initializer_list<const Tensor*>{&wpe, &y}) expect_f32_on(ctx, *t, op, "operand");
  const int64_t n = ids.numel(), d = wte.inputs();
  EAGERLM_OP_EXPECT(positions.numel() == n && wpe.size(1) == d && y.rank() == 2 && y.size(0) == n && y.size(1) == d &&
                        y.is_contiguous(),
                    op, "shapes");
  ctx.queue().embedding(ids.data<int32_t>(), positions.data<int32_t>(), n, wte.view(), wpe.f32(), d, y.f32());
}

void softmax(const ExecContext& ctx, Tensor& x, const Tensor& valid) {
  const char* op = "softmax";
  expect_f32_on(ctx, x, op, "x");
  EAGERLM_OP_EXPECT(x.rank() == 2 && x.is_contiguous(), op, "x must be contiguous 2-D");
  const int32_t* v = nullptr;
  if (valid.defined()) {
    EAGERLM_OP_EXPECT(valid.dtype() == DType::kI32 && valid.numel() == x.size(0) && valid.device() == ctx.device(), op,
                      "valid must be I32 [rows]");
    v = valid.data<int32_t>();
  }
  ctx.queue().softmax(x.f32(), x.size(0), x.size(1), v);
}

}  // namespace eagerlm::ops
