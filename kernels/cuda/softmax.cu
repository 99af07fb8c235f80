// Masked row softmax in place on the GPU: one block per row (grid-strided). Row r keeps its
// first valid[r] entries (clamped to [0, cols]; valid may be null: all valid); the rest become
// exactly 0, and a row with no valid entry becomes all zeros. Stable: the row max is subtracted.
// Each element is read and rewritten only by the thread that owns its column.
#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/launch.h"

namespace eagerlm::cuda {

namespace {
__global__ void softmax_kernel(float* x, int64_t rows, int64_t cols, const int32_t* valid) {
  __shared__ float scratch[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    float* row = x + r * cols;
    int64_t n_valid = cols;
    if (valid) {
      const int64_t v = valid[r];
      n_valid = v < 0 ? 0 : (v > cols ? cols : v);
    }
    for (int64_t c = n_valid + threadIdx.x; c < cols; c += blockDim.x) row[c] = 0.0f;
    if (n_valid == 0) continue;  // uniform across the block: same r, same valid[r]
    float m = -INFINITY;
    for (int64_t c = threadIdx.x; c < n_valid; c += blockDim.x) m = fmaxf(m, row[c]);
    m = block_max(m, scratch);
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < n_valid; c += blockDim.x) {
      const float e = expf(row[c] - m);
      row[c] = e;
      sum += e;
    }
    const float inv_sum = 1.0f / block_sum(sum, scratch);  // sum >= 1: the max's term is e^0
    for (int64_t c = threadIdx.x; c < n_valid; c += blockDim.x) row[c] *= inv_sum;
  }
}
}  // namespace

void softmax(CudaContext& ctx, float* x, int64_t rows, int64_t cols, const int32_t* valid) {
  if (rows <= 0 || cols <= 0) return;
  // Vocabulary-sized rows (sampling) get more threads than attention-sized ones.
  const int threads = cols >= 8192 ? 1024 : (cols >= 1024 ? 256 : 128);
  softmax_kernel<<<grid_for(rows, 1), threads, 0, ctx.stream>>>(x, rows, cols, valid);
  check_launch("softmax");
}

}  // namespace eagerlm::cuda
