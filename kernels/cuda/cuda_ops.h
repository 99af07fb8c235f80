// CUDA kernels: the twins of kernels/cpu/cpu_ops.h, same names, same arguments and semantics,
// plus the execution context that owns the stream and the cuBLAS handle. Pointers are device
// pointers (StepBatch arrays included). Every launch is checked and a failure is reported as an
// eagerlm::Error naming the op. Plain C++ types only: no CUDA headers leak out of kernels/cuda/.
#pragma once

#include <cstdint>

#include "kernels/kv_layout.h"

namespace eagerlm::cuda {

struct CudaContext;
CudaContext* create_context();  // on the current device; throws eagerlm::Error on failure
void destroy_context(CudaContext* ctx) noexcept;
void synchronize(CudaContext& ctx);

// The arithmetic of the GEMMs (linear, linear_transposed). kFp32 (the default) is plain FP32
// (cublasSgemm), matching the CPU to float rounding. kTf32 and kBf16 let cuBLAS run FP32 data
// through tensor cores with inputs rounded to TF32 (10-bit mantissa) or BF16 (7-bit mantissa),
// accumulating in FP32: faster for prefill and large batches, at ~1e-3 / ~1e-2 relative error.
enum class GemmMath { kFp32, kTf32, kBf16 };
void set_gemm_math(CudaContext& ctx, GemmMath math);

void linear(CudaContext& ctx, const float* x, int64_t ldx, const float* w, const float* bias,
            float* y, int64_t ldy, int64_t m, int64_t k, int64_t n);
void linear_transposed(CudaContext& ctx, const float* x, int64_t ldx, const float* w, float* y,
                       int64_t ldy, int64_t m, int64_t k, int64_t n);
void layer_norm(CudaContext& ctx, const float* x, const float* gamma, const float* beta, float* y,
                int64_t rows, int64_t cols, float eps);
void gelu(CudaContext& ctx, const float* x, float* y, int64_t n);
void add(CudaContext& ctx, const float* a, const float* b, float* y, int64_t n);
void embedding(CudaContext& ctx, const int32_t* ids, const int32_t* positions, int64_t n_tokens,
               const float* wte, const float* wpe, int64_t d_model, float* y);
void softmax(CudaContext& ctx, float* x, int64_t rows, int64_t cols, const int32_t* valid);
void kv_append(CudaContext& ctx, const float* qkv, const StepBatch& batch, const KvLayout& layout,
               float* k_cache, float* v_cache);
void attention(CudaContext& ctx, const float* qkv, int64_t ld_qkv, const StepBatch& batch,
               const KvLayout& layout, const float* k_cache, const float* v_cache, float scale,
               float* out, int64_t ld_out);

}  // namespace eagerlm::cuda
