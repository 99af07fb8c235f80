// CPU kernels: float32, row-major, raw pointers. Each op lives in kernels/cpu/<op>.cpp, has a CUDA
// twin in kernels/cuda/<op>.cu and a double-precision reference in test/reference/. Kernels
// trust their arguments; the engine validates shapes before calling them. Parallel loops use
// OpenMP with the thread count set by engine/core/threads.h.
#pragma once

#include <cstdint>

#include "kernels/kv_layout.h"

namespace eagerlm::cpu {

// y[m, n] = x[m, k] · w[k, n] + bias[n]   (bias may be null; rows of x/y have strides ldx/ldy).
// GPT-2's Conv1D layout: w is [in, out]. Uses OpenBLAS sgemm (sgemv when m == 1).
void linear(const float* x, int64_t ldx, const float* w, const float* bias, float* y, int64_t ldy,
            int64_t m, int64_t k, int64_t n);

// y[m, n] = x[m, k] · w[n, k]^T  — the tied output head (logits = h · wteᵀ).
void linear_transposed(const float* x, int64_t ldx, const float* w, float* y, int64_t ldy,
                       int64_t m, int64_t k, int64_t n);

// y[r, :] = (x[r, :] - mean) / sqrt(var + eps) * gamma + beta, over `cols`; y may alias x.
void layer_norm(const float* x, const float* gamma, const float* beta, float* y, int64_t rows,
                int64_t cols, float eps);

// GPT-2's tanh GELU ("gelu_new"): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). y may alias x.
void gelu(const float* x, float* y, int64_t n);

// y[i] = a[i] + b[i]; y may alias a or b (the residual add).
void add(const float* a, const float* b, float* y, int64_t n);

// y[t, :] = wte[ids[t], :] + wpe[positions[t], :] for t < n_tokens. The caller has checked that
// every id < vocab and position < n_positions.
void embedding(const int32_t* ids, const int32_t* positions, int64_t n_tokens, const float* wte,
               const float* wpe, int64_t d_model, float* y);

// Row-wise softmax of x[rows, cols] in place, where row r only has valid[r] leading entries
// (valid may be null: all valid). Entries at or past valid[r] become exactly 0. Numerically
// stable (max subtracted). A row with valid[r] == 0 becomes all zeros.
void softmax(float* x, int64_t rows, int64_t cols, const int32_t* valid);

// Writes the step's new keys and values into the cache. qkv is [n_rows, 3·n_head·d_head] as the
// c_attn projection leaves it (q, then k, then v, each head-major); row r of sequence s goes to
// position past_len[s] + (r - row_start[s]) of slot slot[s].
void kv_append(const float* qkv, const StepBatch& batch, const KvLayout& layout, float* k_cache,
               float* v_cache);

// Padded, strided, batched causal attention over the cache, for every (sequence, head) pair in
// one call. For sequence s, new token i (row row_start[s] + i) attends to cache positions
// [0, past_len[s] + i]; keys are visited in blocks of kAttentionBlock positions, the last block
// padded and masked, and no position at or past past_len[s] + n_new[s] is read. q rows come from
// qkv (the first n_head·d_head columns, row stride ld_qkv); out is [n_rows, n_head·d_head] with
// row stride ld_out. scale is 1/√d_head. Softmax is computed online (running max and sum).
constexpr int kAttentionBlock = 64;
void attention(const float* qkv, int64_t ld_qkv, const StepBatch& batch, const KvLayout& layout,
               const float* k_cache, const float* v_cache, float scale, float* out,
               int64_t ld_out);

}  // namespace eagerlm::cpu
