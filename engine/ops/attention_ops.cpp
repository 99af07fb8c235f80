// Validation and device dispatch for the KV-cache ops: appending a step's keys and values, and
// the padded, strided, batched attention over the cache.
#include <cmath>

#include "engine/ops/op_checks.h"
#include "engine/ops/ops.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cuda/cuda_ops.h"

namespace eagerlm::ops {

using detail::expect;
using detail::expect_f32_on;
using detail::row_stride;

namespace {

void check_cache(const ExecContext& ctx, const KvLayerView& kv, const char* op) {
  expect_f32_on(ctx, kv.keys, op, "keys");
  expect_f32_on(ctx, kv.values, op, "values");
  const KvLayout& l = kv.layout;
  expect(kv.keys.is_contiguous() && kv.values.is_contiguous() && kv.keys.rank() == 4 &&
             kv.keys.shape() == kv.values.shape() && kv.keys.size(1) == l.n_head &&
             kv.keys.size(2) == l.max_len && kv.keys.size(3) == l.d_head,
         op, "cache must be contiguous [slots, n_head, max_len, d_head]: " + kv.keys.describe());
}

void check_qkv(const ExecContext& ctx, const Tensor& qkv, const StepBatch& batch, const KvLayout& l,
               const char* op) {
  expect_f32_on(ctx, qkv, op, "qkv");
  row_stride(qkv, op, "qkv");
  expect(qkv.size(0) == batch.n_rows && qkv.size(1) == 3 * l.n_head * l.d_head, op,
         "qkv must be [n_rows, 3·d]: " + qkv.describe());
}

}  // namespace

void kv_append(const ExecContext& ctx, const Tensor& qkv, const StepBatch& batch, KvLayerView& kv) {
  const char* op = "kv_append";
  check_cache(ctx, kv, op);
  check_qkv(ctx, qkv, batch, kv.layout, op);
  expect(qkv.is_contiguous(), op, "qkv rows must be dense (the kernels take no row stride)");
  switch (ctx.device()) {
    case Device::kCpu: return cpu::kv_append(qkv.f32(), batch, kv.layout, kv.keys.f32(), kv.values.f32());
    case Device::kCuda:
      return cuda::kv_append(*ctx.cuda(), qkv.f32(), batch, kv.layout, kv.keys.f32(), kv.values.f32());
  }
}

void attention(const ExecContext& ctx, const Tensor& qkv, const StepBatch& batch,
               const KvLayerView& kv, Tensor& out) {
  const char* op = "attention";
  check_cache(ctx, kv, op);
  check_qkv(ctx, qkv, batch, kv.layout, op);
  expect_f32_on(ctx, out, op, "out");
  const int64_t ld_out = row_stride(out, op, "out");
  expect(out.size(0) == batch.n_rows && out.size(1) == kv.layout.n_head * kv.layout.d_head, op,
         "out must be [n_rows, d]: " + out.describe());
  const float scale = 1.0f / std::sqrt(float(kv.layout.d_head));
  const int64_t ld_qkv = qkv.size(0) > 1 ? qkv.stride(0) : qkv.size(1);
  switch (ctx.device()) {
    case Device::kCpu:
      return cpu::attention(qkv.f32(), ld_qkv, batch, kv.layout, kv.keys.f32(), kv.values.f32(), scale,
                            out.f32(), ld_out);
    case Device::kCuda:
      return cuda::attention(*ctx.cuda(), qkv.f32(), ld_qkv, batch, kv.layout, kv.keys.f32(),
                             kv.values.f32(), scale, out.f32(), ld_out);
  }
}

}  // namespace eagerlm::ops
