// GPT-2's tanh GELU on the GPU, elementwise; y may alias x (each element is read, then written,
// by the same thread). Computed as x / (1 + e^(-2z)), z = √(2/π)·(x + 0.044715·x³), which equals
// 0.5·x·(1 + tanh z) but does not cancel for very negative x (the CPU kernel uses the same form).
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/launch.h"

namespace eagerlm::cuda {

namespace {
__global__ void gelu_kernel(const float* x, float* y, int64_t n) {
  const float kMinusTwoSqrt2OverPi = -1.5957691216057308f;  // -2·√(2/π)
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = x[i];
    y[i] = v / (1.0f + expf(kMinusTwoSqrt2OverPi * (v + 0.044715f * v * v * v)));
  }
}
}  // namespace

void gelu(CudaContext& ctx, const float* x, float* y, int64_t n) {
  if (n <= 0) return;
  gelu_kernel<<<grid_for(n, kElementwiseThreads), kElementwiseThreads, 0, ctx.stream>>>(x, y, n);
  check_launch("gelu");
}

}  // namespace eagerlm::cuda
