// Validation and device dispatch for the KV-cache ops: appending a step's keys and values, and
// the padded, strided, batched attention over the cache (of F32, BF16 or F16 elements).
#include <cmath>

#include "engine/ops/op_checks.h"
#include "engine/ops/ops.h"

namespace eagerlm::ops {

using detail::expect_f32_on;
using detail::row_stride;

namespace {

void check_cache(const ExecContext& ctx, const KvLayerView& kv, const char* op) {
  const KvLayout& l = kv.layout;
  for (const Tensor* t : {&kv.keys, &kv.values}) {
    EAGERLM_OP_EXPECT(t->defined() && t->device() == ctx.device(), op, "cache tensors must be on the op's device");
    EAGERLM_OP_EXPECT(
        t->dtype() == l.dtype && (l.dtype == DType::kF32 || l.dtype == DType::kBF16 || l.dtype == DType::kF16), op,
        std::string("cache of ") + dtype_name(l.dtype) + " holds " + t->describe());
  }
  EAGERLM_OP_EXPECT(kv.keys.is_contiguous() && kv.values.is_contiguous() && kv.keys.rank() == 4 &&
                        kv.keys.shape() == kv.values.shape() && kv.keys.size(1) == l.n_head &&
                        kv.keys.size(2) == l.max_len && kv.keys.size(3) == l.d_head,
                    op, "cache must be contiguous [slots, n_head, max_len, d_head]: " + kv.keys.describe());
}

void check_qkv(const ExecContext& ctx, const Tensor& qkv, const StepBatch& batch, const KvLayout& l, const char* op) {
  expect_f32_on(ctx, qkv, op, "qkv");
  row_stride(qkv, op, "qkv");
  EAGERLM_OP_EXPECT(qkv.size(0) == batch.n_rows && qkv.size(1) == 3 * l.n_head * l.d_head, op,
                    "qkv must be [n_rows, 3·d]: " + qkv.describe());
}

}  // namespace

void kv_append(const ExecContext& ctx, const Tensor& qkv, const StepBatch& batch, KvLayerView& kv) {
  const char* op = "kv_append";
  check_cache(ctx, kv, op);
  check_qkv(ctx, qkv, batch, kv.layout, op);
  EAGERLM_OP_EXPECT(qkv.is_contiguous(), op, "qkv rows must be dense (the kernels take no row stride)");
  ctx.queue().kv_append(qkv.f32(), batch, kv.layout, kv.keys.raw(), kv.values.raw());
}

void kv_copy(const ExecContext& ctx, KvLayerView& kv, int64_t src_slot, int64_t dst_slot, int64_t n_positions) {
  const char* op = "kv_copy";
  check_cache(ctx, kv, op);
  const int64_t slots = kv.keys.size(0);
  EAGERLM_OP_EXPECT(src_slot >= 0 && src_slot < slots && dst_slot >= 0 && dst_slot < slots && src_slot != dst_slot, op,
                    "slots " + std::to_string(src_slot) + " -> " + std::to_string(dst_slot) +
                        " must be two different slots of " + std::to_string(slots));
  EAGERLM_OP_EXPECT(n_positions >= 0 && n_positions <= kv.layout.max_len, op,
                    std::to_string(n_positions) + " positions exceed max_len " + std::to_string(kv.layout.max_len));
  ctx.queue().kv_copy(kv.layout, kv.keys.raw(), kv.values.raw(), src_slot, dst_slot, n_positions);
}

void attention(const ExecContext& ctx, const Tensor& qkv, const StepBatch& batch, const KvLayerView& kv, Tensor& out) {
  const char* op = "attention";
  check_cache(ctx, kv, op);
  check_qkv(ctx, qkv, batch, kv.layout, op);
  expect_f32_on(ctx, out, op, "out");
  const int64_t ld_out = row_stride(out, op, "out");
  EAGERLM_OP_EXPECT(out.size(0) == batch.n_rows && out.size(1) == kv.layout.n_head * kv.layout.d_head, op,
                    "out must be [n_rows, d]: " + out.describe());
  const float scale = 1.0f / std::sqrt(float(kv.layout.d_head));
  const int64_t ld_qkv = qkv.size(0) > 1 ? qkv.stride(0) : qkv.size(1);
  ctx.queue().attention(qkv.f32(), ld_qkv, batch, kv.layout, kv.keys.raw(), kv.values.raw(), scale, out.f32(), ld_out);
}

}  // namespace eagerlm::ops
