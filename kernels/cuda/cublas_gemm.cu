// The cuBLAS product and bias broadcast shared by the dense layers (cublas_gemm.h).
#include "kernels/cuda/cublas_gemm.h"

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"

namespace eagerlm::cuda {

namespace {
__global__ void broadcast_rows_kernel(const float* bias, float* y, int64_t ldy, int64_t m, int64_t n) {
  for (int64_t r = blockIdx.x; r < m; r += gridDim.x)
    for (int64_t c = threadIdx.x; c < n; c += blockDim.x) y[r * ldy + c] = bias[c];
}
}  // namespace

void gemm_f32(CudaContext& ctx, cublasOperation_t op_a, int m, int n, int k, const float* a, int lda, const float* b,
              int ldb, float beta, float* c, int ldc) {
  const float alpha = 1.0f;
  if (ctx.gemm_math == GemmMath::kFp32) {
    EAGERLM_CUBLAS_CHECK(cublasSgemm(ctx.cublas, op_a, CUBLAS_OP_N, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc));
    return;
  }
  const cublasComputeType_t compute =
      ctx.gemm_math == GemmMath::kTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F_FAST_16BF;
  EAGERLM_CUBLAS_CHECK(cublasGemmEx(ctx.cublas, op_a, CUBLAS_OP_N, m, n, k, &alpha, a, CUDA_R_32F, lda, b, CUDA_R_32F,
                                    ldb, &beta, c, CUDA_R_32F, ldc, compute, CUBLAS_GEMM_DEFAULT));
}

void broadcast_bias(CudaContext& ctx, const float* bias, float* y, int64_t ldy, int64_t m, int64_t n) {
  broadcast_rows_kernel<<<grid_for(m, 1), kElementwiseThreads, 0, ctx.stream>>>(bias, y, ldy, m, n);
  check_launch("linear (bias)");
}

}  // namespace eagerlm::cuda
