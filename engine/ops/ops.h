// The ops the model calls, on tensors. Each validates shapes, dtypes and devices (a mismatch is
// an eagerlm bug, reported as kInternal naming the op), then dispatches on the device to the CPU
// kernel (kernels/cpu/) or the CUDA kernel (kernels/cuda/), through the context's queue
// (engine/core/backend.h). Row-strided 2-D views are accepted where noted: rows may be further
// apart than their length, columns must be contiguous.
#pragma once

#include "engine/core/tensor.h"
#include "engine/core/weight_tensor.h"
#include "engine/ops/exec_context.h"
#include "kernels/common/kv_layout.h"
#include "kernels/common/random/threefry.h"
#include "kernels/common/sampling_types.h"

namespace eagerlm::ops {

// y[m,n] = x[m,k] · w[k,n] + bias[n]; bias may be undefined. x and y may be row-strided.
void linear(const ExecContext& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y);
// y[m,n] = x[m,k] · w[n,k]ᵀ (the tied output head). x and y may be row-strided.
void linear_transposed(const ExecContext& ctx, const Tensor& x, const Tensor& w, Tensor& y);
// out[r] = log softmax(h[r] · wᵀ)[targets[r]]: the log-probability of each row's target id under
// the tied output head (w = wte [vocab, d]), computed by blocks of the vocabulary so that no
// [rows, vocab] logits exist. h [rows, d] may be row-strided; targets I32 [rows] on the op's
// device, range-checked by the caller (one outside [0, vocab) gives NaN); out F32 [rows].
void target_logprobs(const ExecContext& ctx, const Tensor& h, const Tensor& w, const Tensor& targets, Tensor& out);
// The same with a weight of any type (engine/core/weight_tensor.h): w input-major [k, n] for
// linear, output-major [n, k] for linear_transposed. An f32 weight takes the float32 paths above.
// linear also takes an output-major w (a layer the loader held so, for the backend's speed): the
// product of linear_transposed, plus the bias.
void linear(const ExecContext& ctx, const Tensor& x, const WeightTensor& w, const Tensor& bias, Tensor& y);
void linear_transposed(const ExecContext& ctx, const Tensor& x, const WeightTensor& w, Tensor& y);
// Row-wise layer norm of x[m,d]; y may be x.
void layer_norm(const ExecContext& ctx, const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y, float eps);
// GPT-2's tanh GELU, elementwise; y may be x.
void gelu(const ExecContext& ctx, const Tensor& x, Tensor& y);
// y = a + b, elementwise; y may be a or b.
void add(const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor& y);
// y[t] = wte[ids[t]] + wpe[positions[t]]. ids and positions are I32 on the op's device and have
// been range-checked by the caller.
void embedding(const ExecContext& ctx, const Tensor& ids, const Tensor& positions, const Tensor& wte, const Tensor& wpe,
               Tensor& y);
// The same with wte of any weight type, output-major [vocab, d] (its rows widened to float32).
void embedding(const ExecContext& ctx, const Tensor& ids, const Tensor& positions, const WeightTensor& wte,
               const Tensor& wpe, Tensor& y);
// Masked row softmax in place: row r keeps its first valid[r] entries (valid: I32 [rows], or
// undefined for all).
void softmax(const ExecContext& ctx, Tensor& x, const Tensor& valid);

// One layer's slice of the KV cache: keys and values [slots, n_head, max_len, d_head], F32, BF16
// or F16 (the layout's dtype).
struct KvLayerView {
  Tensor keys;
  Tensor values;
  KvLayout layout;
};

// Writes the step's keys and values (columns d..3d of qkv) into the cache.
void kv_append(const ExecContext& ctx, const Tensor& qkv, const StepBatch& batch, KvLayerView& kv);
// Copies cached positions [0, n_positions) of slot src_slot to dst_slot (a different slot).
void kv_copy(const ExecContext& ctx, KvLayerView& kv, int64_t src_slot, int64_t dst_slot, int64_t n_positions);
// Causal attention of the step's queries over the cache; out is [n_rows, d].
void attention(const ExecContext& ctx, const Tensor& qkv, const StepBatch& batch, const KvLayerView& kv, Tensor& out);

// The initializer's fills, in place over a contiguous F32, F16 or BF16 tensor t (the values are
// the same on every device; see kernels/cpu/cpu_ops.h): element i of t gets element
// first_index + i of jax.random.normal(key, ..., float32) * stddev, or `value`. Synchronous.
void fill_normal(const ExecContext& ctx, Tensor& t, rng::Key key, float stddev, uint64_t first_index);
void fill_constant(const ExecContext& ctx, Tensor& t, float value);

// Sampling where the logits are (ctx.samples_on_device() only; see engine/generation's
// DeviceSampler): one token per row of logits [n_rows, vocab] (row-strided), with rows[r]
// (SampleRow, as bytes in a U8 or I32 device buffer) and the fed tokens; presence is the
// [n_slots, vocab] byte table of tokens seen per slot; out gets n_rows SampleResults.
void sample_rows(const ExecContext& ctx, const Tensor& logits, const SampleRow* rows, const int32_t* tokens,
                 uint8_t* presence, int64_t n_slots, const SampleParams& params, SampleResult* out);

}  // namespace eagerlm::ops
