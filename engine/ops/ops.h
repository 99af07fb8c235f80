// The ops the model calls, on tensors. Each validates shapes, dtypes and devices (a mismatch is
// an eagerlm bug, reported as kInternal naming the op), then dispatches on the device to the CPU
// kernel (kernels/cpu/) or the CUDA kernel (kernels/cuda/). Row-strided 2-D views are accepted
// where noted: rows may be further apart than their length, columns must be contiguous.
#pragma once

#include "engine/core/tensor.h"
#include "engine/ops/exec_context.h"
#include "kernels/kv_layout.h"

namespace eagerlm::ops {

// y[m,n] = x[m,k] · w[k,n] + bias[n]; bias may be undefined. x and y may be row-strided.
void linear(const ExecContext& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y);
// y[m,n] = x[m,k] · w[n,k]ᵀ (the tied output head). x and y may be row-strided.
void linear_transposed(const ExecContext& ctx, const Tensor& x, const Tensor& w, Tensor& y);
// Row-wise layer norm of x[m,d]; y may be x.
void layer_norm(const ExecContext& ctx, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                Tensor& y, float eps);
// GPT-2's tanh GELU, elementwise; y may be x.
void gelu(const ExecContext& ctx, const Tensor& x, Tensor& y);
// y = a + b, elementwise; y may be a or b.
void add(const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor& y);
// y[t] = wte[ids[t]] + wpe[positions[t]]. ids and positions are I32 on the op's device and have
// been range-checked by the caller.
void embedding(const ExecContext& ctx, const Tensor& ids, const Tensor& positions, const Tensor& wte,
               const Tensor& wpe, Tensor& y);
// Masked row softmax in place: row r keeps its first valid[r] entries (valid: I32 [rows], or
// undefined for all).
void softmax(const ExecContext& ctx, Tensor& x, const Tensor& valid);

// One layer's slice of the KV cache: keys and values [slots, n_head, max_len, d_head].
struct KvLayerView {
  Tensor keys;
  Tensor values;
  KvLayout layout;
};

// Writes the step's keys and values (columns d..3d of qkv) into the cache.
void kv_append(const ExecContext& ctx, const Tensor& qkv, const StepBatch& batch, KvLayerView& kv);
// Causal attention of the step's queries over the cache; out is [n_rows, d].
void attention(const ExecContext& ctx, const Tensor& qkv, const StepBatch& batch,
               const KvLayerView& kv, Tensor& out);

}  // namespace eagerlm::ops
