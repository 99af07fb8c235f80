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
// The bias is first broadcast into every row of y, then added to by the product with beta = 1
// (cublas_gemm.h holds the product and the broadcast, shared with linear_typed.cu).
#include "kernels/cuda/cublas_gemm.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/launch.h"

namespace eagerlm::cuda {

void linear(CudaContext& ctx, const float* x, int64_t ldx, const float* w, const float* bias, float* y, int64_t ldy,
            int64_t m, int64_t k, int64_t n) {
  if (m <= 0 || n <= 0) return;
  ldx = row_stride_for_cublas(ldx, m, k);
  ldy = row_stride_for_cublas(ldy, m, n);
  const int im = checked_int(m, "linear", "m"), ik = checked_int(k, "linear", "k");
  const int in = checked_int(n, "linear", "n");
  const int ildx = checked_int(ldx, "linear", "ldx"), ildy = checked_int(ldy, "linear", "ldy");
  float beta = 0.0f;
  if (bias) {
    broadcast_bias(ctx, bias, y, ldy, m, n);
    beta = 1.0f;
  }
  gemm_f32(ctx, CUBLAS_OP_N, in, im, ik, w, in, x, ildx, beta, y, ildy);
}

void linear_transposed(CudaContext& ctx, const float* x, int64_t ldx, const float* w, float* y, int64_t ldy, int64_t m,
                       int64_t k, int64_t n) {
  if (m <= 0 || n <= 0) return;
  ldx = row_stride_for_cublas(ldx, m, k);
  ldy = row_stride_for_cublas(ldy, m, n);
  const int im = checked_int(m, "linear_transposed", "m");
  const int ik = checked_int(k, "linear_transposed", "k");
  const int in = checked_int(n, "linear_transposed", "n");
  const int ildx = checked_int(ldx, "linear_transposed", "ldx");
  const int ildy = checked_int(ldy, "linear_transposed", "ldy");
  // lda = k must be >= 1 for cuBLAS even when k == 0.
  gemm_f32(ctx, CUBLAS_OP_T, in, im, ik, w, ik > 0 ? ik : 1, x, ildx, 0.0f, y, ildy);
}

void set_gemm_math(CudaContext& ctx, GemmMath math) { ctx.gemm_math = math; }

}  // namespace eagerlm::cuda
