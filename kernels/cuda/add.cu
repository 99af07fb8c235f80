// Elementwise sum on the GPU (the residual add); y may alias a or b. Bit-identical to the CPU:
// one correctly rounded float addition per element.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/launch.h"

namespace eagerlm::cuda {

namespace {
__global__ void add_kernel(const float* a, const float* b, float* y, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = a[i] + b[i];
}
}  // namespace

void add(CudaContext& ctx, const float* a, const float* b, float* y, int64_t n) {
  if (n <= 0) return;
  add_kernel<<<grid_for(n, kElementwiseThreads), kElementwiseThreads, 0, ctx.stream>>>(a, b, y, n);
  check_launch("add");
}

}  // namespace eagerlm::cuda
