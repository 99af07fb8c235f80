// CUDA twins of the CPU initializer fills (kernels/cpu/random_fill.cpp): each thread computes
// whole elements with the same per-element functions as the CPU (kernels/common/random/threefry.h and
// normal.h). normal.h uses explicitly rounded intrinsics (__fadd_rn, __fmul_rn, __fmaf_rn, ...),
// which the compiler never contracts, so the values are bit-identical to the CPU's whatever
// --fmad says; building this file with --fmad=false as well costs nothing (no other float math).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>

#include "kernels/common/random/normal.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/launch.h"

namespace eagerlm::cuda {

using rng::Key;

namespace {

__device__ inline void store(float* p, float v) { *p = v; }
__device__ inline void store(__half* p, float v) { *p = __float2half_rn(v); }
__device__ inline void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

template <typename T>
__global__ void normal_kernel(Key key, float stddev, T* out, int64_t n, uint64_t first_index) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    store(out + i, scaled_normal_at(key, first_index + uint64_t(i), stddev));
}

template <typename T>
__global__ void constant_kernel(float value, T* out, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) store(out + i, value);
}

// Waits for the fill (these calls are synchronous, like the CPU ones) and reports any failure.
void finish(CudaContext& ctx, const char* op) {
  check_launch(op);
  EAGERLM_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
}

}  // namespace

void fill_normal(CudaContext& ctx, Key key, float stddev, DType dtype, void* device_out, int64_t n,
                 uint64_t first_index) {
  if (n <= 0) return;
  const unsigned grid = grid_for(n, kElementwiseThreads);
  if (dtype == DType::kF32)
    normal_kernel<<<grid, kElementwiseThreads, 0, ctx.stream>>>(key, stddev, static_cast<float*>(device_out), n,
                                                                first_index);
  else if (dtype == DType::kF16)
    normal_kernel<<<grid, kElementwiseThreads, 0, ctx.stream>>>(key, stddev, static_cast<__half*>(device_out), n,
                                                                first_index);
  else
    normal_kernel<<<grid, kElementwiseThreads, 0, ctx.stream>>>(key, stddev, static_cast<__nv_bfloat16*>(device_out), n,
                                                                first_index);
  finish(ctx, "init normal");
}

void fill_constant(CudaContext& ctx, float value, DType dtype, void* device_out, int64_t n) {
  if (n <= 0) return;
  const unsigned grid = grid_for(n, kElementwiseThreads);
  if (dtype == DType::kF32)
    constant_kernel<<<grid, kElementwiseThreads, 0, ctx.stream>>>(value, static_cast<float*>(device_out), n);
  else if (dtype == DType::kF16)
    constant_kernel<<<grid, kElementwiseThreads, 0, ctx.stream>>>(value, static_cast<__half*>(device_out), n);
  else
    constant_kernel<<<grid, kElementwiseThreads, 0, ctx.stream>>>(value, static_cast<__nv_bfloat16*>(device_out), n);
  finish(ctx, "init constant");
}

}  // namespace eagerlm::cuda
