// The dense layers on the GPU through cuBLAS: sgemm for plain FP32 (the default, see
// cuda_context.cu), cublasGemmEx with a TF32 or BF16 tensor-core compute type when the context
// asks for it (GemmMath in cuda_ops.h); data stays FP32 in memory either way.
//
// cuBLAS is column-major, our matrices row-major. A row-major [r, c] matrix with row stride ld is,
// byte for byte, a column-major [c, r] matrix with leading dimension ld: its transpose. So instead
// of Y = X·W we ask cuBLAS for the transposed product, which it then writes in exactly our layout:
//   linear:            Yᵀ[n, m] = Wᵀ[n, k] · Xᵀ[k, m]
//       W (row-major [k, n], ld n) is column-major Wᵀ [n, k] with lda = n -> op N
//       X (row-major [m, k], ld ldx) is column-major Xᵀ [k, m] with ldb = ldx -> op N
//   linear_transposed: Yᵀ[n, m] = W[n, k] · Xᵀ[k, m]
//       W (row-major [n, k], ld k) is column-major Wᵀ [k, n] with lda = k -> op T gives W
// and Y (row-major [m, n], ld ldy) is column-major Yᵀ [n, m] with ldc = ldy.
// The bias is first broadcast into every row of y, then added to by the product with beta = 1.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/launch.h"

namespace eagerlm::cuda {

namespace {
// With a single row the row stride means nothing, but cuBLAS still insists on ld >= max(1, rows
// of the column-major operand); any value that satisfies it is equivalent.
int64_t row_stride_for_cublas(int64_t ld, int64_t m, int64_t width) {
  const int64_t least = width > 1 ? width : 1;
  return (m == 1 && ld < least) ? least : ld;
}

// C = alpha·op(A)·op(B) + beta·C in column-major terms, with the context's GemmMath.
void gemm(CudaContext& ctx, cublasOperation_t op_a, int m, int n, int k, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc) {
  const float alpha = 1.0f;
  if (ctx.gemm_math == GemmMath::kFp32) {
    EAGERLM_CUBLAS_CHECK(cublasSgemm(ctx.cublas, op_a, CUBLAS_OP_N, m, n, k, &alpha, a, lda, b,
                                     ldb, &beta, c, ldc));
    return;
  }
  const cublasComputeType_t compute = ctx.gemm_math == GemmMath::kTf32
                                          ? CUBLAS_COMPUTE_32F_FAST_TF32
                                          : CUBLAS_COMPUTE_32F_FAST_16BF;
  EAGERLM_CUBLAS_CHECK(cublasGemmEx(ctx.cublas, op_a, CUBLAS_OP_N, m, n, k, &alpha, a, CUDA_R_32F,
                                    lda, b, CUDA_R_32F, ldb, &beta, c, CUDA_R_32F, ldc, compute,
                                    CUBLAS_GEMM_DEFAULT));
}

__global__ void broadcast_rows_kernel(const float* bias, float* y, int64_t ldy, int64_t m,
                                      int64_t n) {
  for (int64_t r = blockIdx.x; r < m; r += gridDim.x)
    for (int64_t c = threadIdx.x; c < n; c += blockDim.x) y[r * ldy + c] = bias[c];
}
}  // namespace

void linear(CudaContext& ctx, const float* x, int64_t ldx, const float* w, const float* bias,
            float* y, int64_t ldy, int64_t m, int64_t k, int64_t n) {
  if (m <= 0 || n <= 0) return;
  ldx = row_stride_for_cublas(ldx, m, k);
  ldy = row_stride_for_cublas(ldy, m, n);
  const int im = checked_int(m, "linear", "m"), ik = checked_int(k, "linear", "k");
  const int in = checked_int(n, "linear", "n");
  const int ildx = checked_int(ldx, "linear", "ldx"), ildy = checked_int(ldy, "linear", "ldy");
  float beta = 0.0f;
  if (bias) {
    broadcast_rows_kernel<<<grid_for(m, 1), kElementwiseThreads, 0, ctx.stream>>>(bias, y, ldy, m,
                                                                                   n);
    check_launch("linear (bias)");
    beta = 1.0f;
  }
  gemm(ctx, CUBLAS_OP_N, in, im, ik, w, in, x, ildx, beta, y, ildy);
}

void linear_transposed(CudaContext& ctx, const float* x, int64_t ldx, const float* w, float* y,
                       int64_t ldy, int64_t m, int64_t k, int64_t n) {
  if (m <= 0 || n <= 0) return;
  ldx = row_stride_for_cublas(ldx, m, k);
  ldy = row_stride_for_cublas(ldy, m, n);
  const int im = checked_int(m, "linear_transposed", "m");
  const int ik = checked_int(k, "linear_transposed", "k");
  const int in = checked_int(n, "linear_transposed", "n");
  const int ildx = checked_int(ldx, "linear_transposed", "ldx");
  const int ildy = checked_int(ldy, "linear_transposed", "ldy");
  // lda = k must be >= 1 for cuBLAS even when k == 0.
  gemm(ctx, CUBLAS_OP_T, in, im, ik, w, ik > 0 ? ik : 1, x, ildx, 0.0f, y, ildy);
}

void set_gemm_math(CudaContext& ctx, GemmMath math) { ctx.gemm_math = math; }

}  // namespace eagerlm::cuda
