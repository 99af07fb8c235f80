// CUDA twins of engine/random/fill.h (declared in engine/random/fill_cuda.h): each thread computes
// whole elements with the same per-element functions as the CPU (engine/random/threefry.h and
// normal.h). normal.h uses explicitly rounded intrinsics (__fadd_rn, __fmul_rn, __fmaf_rn, ...),
// which the compiler never contracts, so the values are bit-identical to the CPU's whatever
// --fmad says; building this file with --fmad=false as well costs nothing (no other float math).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>

#include "engine/core/error.h"
#include "engine/random/fill_cuda.h"
#include "engine/random/normal.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"

namespace eagerlm::rng::cuda {

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

void check_dtype(DType dtype, const char* what) {
  if (dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16)
    throw_error(ErrorCode::kInvalidArgument,
                std::string(what) + ": parameters are F32, F16 or BF16, not " + dtype_name(dtype));
}

// Waits for the fill (these calls are synchronous, like the CPU ones) and reports any failure.
void finish(const char* op) {
  ::eagerlm::cuda::check_launch(op);
  EAGERLM_CUDA_CHECK(cudaStreamSynchronize(nullptr));
}

}  // namespace

void fill_normal(Key key, float stddev, DType dtype, void* device_out, int64_t n, uint64_t first_index) {
  check_dtype(dtype, "CUDA fill_normal");
  if (n <= 0) return;
  using ::eagerlm::cuda::grid_for;
  using ::eagerlm::cuda::kElementwiseThreads;
  const unsigned grid = grid_for(n, kElementwiseThreads);
  if (dtype == DType::kF32)
    normal_kernel<<<grid, kElementwiseThreads>>>(key, stddev, static_cast<float*>(device_out), n, first_index);
  else if (dtype == DType::kF16)
    normal_kernel<<<grid, kElementwiseThreads>>>(key, stddev, static_cast<__half*>(device_out), n, first_index);
  else
    normal_kernel<<<grid, kElementwiseThreads>>>(key, stddev, static_cast<__nv_bfloat16*>(device_out), n,
                                                 first_index);
  finish("init normal");
}

void fill_constant(float value, DType dtype, void* device_out, int64_t n) {
  check_dtype(dtype, "CUDA fill_constant");
  if (n <= 0) return;
  using ::eagerlm::cuda::grid_for;
  using ::eagerlm::cuda::kElementwiseThreads;
  const unsigned grid = grid_for(n, kElementwiseThreads);
  if (dtype == DType::kF32)
    constant_kernel<<<grid, kElementwiseThreads>>>(value, static_cast<float*>(device_out), n);
  else if (dtype == DType::kF16)
    constant_kernel<<<grid, kElementwiseThreads>>>(value, static_cast<__half*>(device_out), n);
  else
    constant_kernel<<<grid, kElementwiseThreads>>>(value, static_cast<__nv_bfloat16*>(device_out), n);
  finish("init constant");
}

uint64_t free_memory_bytes() {
  size_t free = 0, total = 0;
  EAGERLM_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return uint64_t(free);
}

}  // namespace eagerlm::rng::cuda
