// Warp- and block-wide reductions for the row kernels (layer_norm, softmax). Every thread of the
// block gets the same, bit-identical result: the xor butterfly leaves every lane with the same
// sum (float addition is commutative), and every warp then reduces the same per-warp partials in
// the same order. Requires blockDim.x to be a multiple of 32 (at most 1024) and every thread of
// the block to call it (it synchronizes).
#pragma once

#include <cuda_runtime.h>

#include <cmath>

namespace eagerlm::cuda {

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// `scratch` is 32 floats of shared memory, reusable by back-to-back calls: the leading barrier
// keeps a call from overwriting partials the previous call's readers still need.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  const int lane = int(threadIdx.x) & 31;
  const int warp = int(threadIdx.x) >> 5;
  const int n_warps = int(blockDim.x) >> 5;
  v = warp_sum(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  return warp_sum(lane < n_warps ? scratch[lane] : 0.0f);
}

__device__ __forceinline__ float block_max(float v, float* scratch) {
  const int lane = int(threadIdx.x) & 31;
  const int warp = int(threadIdx.x) >> 5;
  const int n_warps = int(blockDim.x) >> 5;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  return warp_max(lane < n_warps ? scratch[lane] : -INFINITY);
}

}  // namespace eagerlm::cuda
