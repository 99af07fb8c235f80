// Row-wise layer norm on the GPU: one block per row (grid-strided), two passes in float — the
// mean, then the mean squared deviation (population variance, as in GPT-2) — each a fixed-order
// block reduction, so results repeat bit for bit. y may alias x: the row is fully read by both
// reductions before any thread writes, and each element is then read and written by one thread.
#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/launch.h"

namespace eagerlm::cuda {

namespace {
__global__ void layer_norm_kernel(const float* x, const float* gamma, const float* beta, float* y, int64_t rows,
                                  int64_t cols, float eps) {
  __shared__ float scratch[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* in = x + r * cols;
    float* out = y + r * cols;
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += in[c];
    const float mean = block_sum(sum, scratch) / float(cols);
    float sq = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float d = in[c] - mean;
      sq += d * d;
    }
    const float var = block_sum(sq, scratch) / float(cols);
    const float inv_std = 1.0f / sqrtf(var + eps);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) out[c] = (in[c] - mean) * inv_std * gamma[c] + beta[c];
    // The next row's first block_sum starts with a barrier, so no thread races ahead into
    // `scratch` while others still read this row's results.
  }
}
}  // namespace

void layer_norm(CudaContext& ctx, const float* x, const float* gamma, const float* beta, float* y, int64_t rows,
                int64_t cols, float eps) {
  if (rows <= 0 || cols <= 0) return;
  const int threads = cols >= 1024 ? 256 : 128;
  layer_norm_kernel<<<grid_for(rows, 1), threads, 0, ctx.stream>>>(x, gamma, beta, y, rows, cols, eps);
  check_launch("layer_norm");
}

}  // namespace eagerlm::cuda
