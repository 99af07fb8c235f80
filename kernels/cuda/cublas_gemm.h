// What the dense layers on the GPU share (linear.cu, linear_typed.cu): the cuBLAS product in the
// context's GemmMath, the broadcast of a bias into every output row, and cuBLAS's leading
// dimensions for row-major operands (see linear.cu for the row-major/column-major mapping).
// Internal to kernels/cuda/.
#pragma once

#include <cublas_v2.h>

#include <cstdint>

#include "kernels/cuda/cuda_context.h"

namespace eagerlm::cuda {

// With a single row the row stride means nothing, but cuBLAS still insists on ld >= max(1, rows
// of the column-major operand); any value that satisfies it is equivalent.
inline int64_t row_stride_for_cublas(int64_t ld, int64_t m, int64_t width) {
  const int64_t least = width > 1 ? width : 1;
  return (m == 1 && ld < least) ? least : ld;
}

// C = op(A)·B + beta·C in column-major terms, FP32 data, with the context's GemmMath (sgemm for
// kFp32, cublasGemmEx with a TF32 or BF16 tensor-core compute type otherwise).
void gemm_f32(CudaContext& ctx, cublasOperation_t op_a, int m, int n, int k, const float* a, int lda, const float* b,
              int ldb, float beta, float* c, int ldc);

// y[r, c] = bias[c] for r < m, c < n (row stride ldy), queued on the context's stream.
void broadcast_bias(CudaContext& ctx, const float* bias, float* y, int64_t ldy, int64_t m, int64_t n);

}  // namespace eagerlm::cuda
