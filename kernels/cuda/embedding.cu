// Token plus position embedding on the GPU: y[t, :] = wte[ids[t], :] + wpe[positions[t], :], wte
// of any weight type (output-major [vocab, d_model], widened as typed_values.cuh does).
// ids and positions are device arrays the caller has range-checked. One block per token row
// (grid-strided), threads across d_model, so reads of both tables are coalesced.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/typed_values.cuh"

namespace eagerlm::cuda {

namespace {
template <WeightType T>
__global__ void embedding_kernel(const int32_t* ids, const int32_t* positions, int64_t n_tokens, const Stored<T>* wte,
                                 const float* scales, const float* wpe, int64_t d_model, float* y) {
  for (int64_t t = blockIdx.x; t < n_tokens; t += gridDim.x) {
    const int64_t id = int64_t(ids[t]);
    const Stored<T>* tok = wte + id * d_model;
    const float* pos = wpe + int64_t(positions[t]) * d_model;
    float* out = y + t * d_model;
    for (int64_t c = threadIdx.x; c < d_model; c += blockDim.x) {
      float w = widen<T>(tok[c]);
      if constexpr (T == WeightType::kInt8) w = __fmul_rn(w, scales[id * (d_model / kInt8Block) + c / kInt8Block]);
      out[c] = w + pos[c];
    }
  }
}

template <WeightType T>
void launch(CudaContext& ctx, const int32_t* ids, const int32_t* positions, int64_t n_tokens, const Weights& wte,
            const float* wpe, int64_t d_model, float* y) {
  embedding_kernel<T><<<grid_for(n_tokens, 1), kElementwiseThreads, 0, ctx.stream>>>(
      ids, positions, n_tokens, static_cast<const Stored<T>*>(wte.data), wte.scales, wpe, d_model, y);
}
}  // namespace

void embedding(CudaContext& ctx, const int32_t* ids, const int32_t* positions, int64_t n_tokens, const Weights& wte,
               const float* wpe, int64_t d_model, float* y) {
  if (n_tokens <= 0 || d_model <= 0) return;
  switch (wte.type) {
    case WeightType::kF32: launch<WeightType::kF32>(ctx, ids, positions, n_tokens, wte, wpe, d_model, y); break;
    case WeightType::kBF16: launch<WeightType::kBF16>(ctx, ids, positions, n_tokens, wte, wpe, d_model, y); break;
    case WeightType::kF16: launch<WeightType::kF16>(ctx, ids, positions, n_tokens, wte, wpe, d_model, y); break;
    case WeightType::kInt8: launch<WeightType::kInt8>(ctx, ids, positions, n_tokens, wte, wpe, d_model, y); break;
  }
  check_launch("embedding");
}

}  // namespace eagerlm::cuda
