// Token plus position embedding on the GPU: y[t, :] = wte[ids[t], :] + wpe[positions[t], :].
// ids and positions are device arrays the caller has range-checked. One block per token row
// (grid-strided), threads across d_model, so reads of both tables are coalesced.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/launch.h"

namespace eagerlm::cuda {

namespace {
__global__ void embedding_kernel(const int32_t* ids, const int32_t* positions, int64_t n_tokens,
                                 const float* wte, const float* wpe, int64_t d_model, float* y) {
  for (int64_t t = blockIdx.x; t < n_tokens; t += gridDim.x) {
    const float* tok = wte + int64_t(ids[t]) * d_model;
    const float* pos = wpe + int64_t(positions[t]) * d_model;
    float* out = y + t * d_model;
    for (int64_t c = threadIdx.x; c < d_model; c += blockDim.x) out[c] = tok[c] + pos[c];
  }
}
}  // namespace

void embedding(CudaContext& ctx, const int32_t* ids, const int32_t* positions, int64_t n_tokens,
               const float* wte, const float* wpe, int64_t d_model, float* y) {
  if (n_tokens <= 0 || d_model <= 0) return;
  embedding_kernel<<<grid_for(n_tokens, 1), kElementwiseThreads, 0, ctx.stream>>>(
      ids, positions, n_tokens, wte, wpe, d_model, y);
  check_launch("embedding");
}

}  // namespace eagerlm::cuda
