// CUDA kernels: the twins of kernels/cpu/cpu_ops.h, same names, same arguments and semantics,
// plus the execution context that owns the stream and the cuBLAS handle. Pointers are device
// pointers (StepBatch arrays included). Every launch is checked and a failure is reported as an
// eagerlm::Error naming the op. Plain C++ types only: no CUDA headers leak out of kernels/cuda/.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/gemm_math.h"
#include "kernels/common/kv_layout.h"
#include "kernels/common/random/threefry.h"
#include "kernels/common/weights.h"

namespace eagerlm::cuda {

using ::eagerlm::GemmMath;

struct CudaContext;
CudaContext* create_context();  // on the current device; throws eagerlm::Error on failure
void destroy_context(CudaContext* ctx) noexcept;
void synchronize(CudaContext& ctx);

// The arithmetic of the GEMMs (linear, linear_transposed): kFp32 is cublasSgemm, matching the
// CPU to float rounding; kTf32 and kBf16 use tensor cores (kernels/common/gemm_math.h).
void set_gemm_math(CudaContext& ctx, GemmMath math);

void linear(CudaContext& ctx, const float* x, int64_t ldx, const float* w, const float* bias, float* y, int64_t ldy,
            int64_t m, int64_t k, int64_t n);
void linear_transposed(CudaContext& ctx, const float* x, int64_t ldx, const float* w, float* y, int64_t ldy, int64_t m,
                       int64_t k, int64_t n);
// The CPU's target_logprobs (same contract; results within float rounding, not bit-identical).
// The logits of one block of kTargetLogprobBlock ids at a time live in the context's scratch
// (the products use the context's GemmMath); each row's block is reduced by
// kTargetLogprobThreads threads (the tests' error bounds follow from these two numbers).
constexpr int64_t kTargetLogprobBlock = 8192;
constexpr int kTargetLogprobThreads = 256;
void target_logprobs(CudaContext& ctx, const float* h, int64_t ldh, const float* w, const int32_t* targets, float* out,
                     int64_t rows, int64_t d, int64_t vocab);
// Grows ctx's scratch now to what target_logprobs takes for up to max_rows rows, so that a step
// never has to grow it (growing synchronizes the stream and reallocates).
void reserve_target_logprobs_scratch(CudaContext& ctx, int64_t max_rows);
// Typed weights (linear_typed.cu): up to kTypedGemvRows rows a fused dequantizing GEMV reads each
// weight once for all rows (float32 arithmetic on the widened weights); more rows (prefill) run
// cuBLAS: with the context's GemmMath kFp32, on tiles of W dequantized to float32 (sgemm, so the
// CPU's float32 results to rounding); with kTf32/kBf16, bf16/f16 W directly in a
// cublasGemmEx of x rounded to W's type, int8 W on dequantized tiles in tensor-core FP32 math.
constexpr int64_t kTypedGemvRows = 32;
void linear_typed(CudaContext& ctx, const float* x, int64_t ldx, const Weights& w, const float* bias, float* y,
                  int64_t ldy, int64_t m, int64_t k, int64_t n);
void linear_transposed_typed(CudaContext& ctx, const float* x, int64_t ldx, const Weights& w, float* y, int64_t ldy,
                             int64_t m, int64_t k, int64_t n);
void layer_norm(CudaContext& ctx, const float* x, const float* gamma, const float* beta, float* y, int64_t rows,
                int64_t cols, float eps);
void gelu(CudaContext& ctx, const float* x, float* y, int64_t n);
void add(CudaContext& ctx, const float* a, const float* b, float* y, int64_t n);
void embedding(CudaContext& ctx, const int32_t* ids, const int32_t* positions, int64_t n_tokens, const Weights& wte,
               const float* wpe, int64_t d_model, float* y);
void softmax(CudaContext& ctx, float* x, int64_t rows, int64_t cols, const int32_t* valid);
// Caches of layout.dtype: F32, BF16 or F16.
void kv_append(CudaContext& ctx, const float* qkv, const StepBatch& batch, const KvLayout& layout, void* k_cache,
               void* v_cache);
void kv_copy(CudaContext& ctx, const KvLayout& layout, void* k_cache, void* v_cache, int64_t src_slot,
             int64_t dst_slot, int64_t n_positions);
void attention(CudaContext& ctx, const float* qkv, int64_t ld_qkv, const StepBatch& batch, const KvLayout& layout,
               const void* k_cache, const void* v_cache, float scale, float* out, int64_t ld_out);

// The initializer's fills (init_normal.cu), the CPU's (kernels/cpu/random_fill.cpp) bit for bit;
// synchronous: they return when the values are in device memory.
void fill_normal(CudaContext& ctx, rng::Key key, float stddev, DType dtype, void* device_out, int64_t n,
                 uint64_t first_index);
void fill_constant(CudaContext& ctx, float value, DType dtype, void* device_out, int64_t n);

}  // namespace eagerlm::cuda
