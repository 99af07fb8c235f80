// The CUDA twins of fill.h, computing the same per-element functions (threefry.h, normal.h) in
// device memory, so a model initialized on a GPU is bit-identical to one initialized on the CPU.
// Implemented in kernels/cuda/init_normal.cu when the CUDA backend is built, and by
// engine/random/fill_cuda_absent.cpp (which throws kUnsupported) otherwise. All calls are
// synchronous and throw eagerlm::Error on a CUDA failure.
#pragma once

#include <cstdint>

#include "engine/core/dtype.h"
#include "engine/random/threefry.h"

namespace eagerlm::rng::cuda {

// device_out[i] = element (first_index + i) of jax.random.normal(key, shape, float32) * stddev,
// stored as `dtype` (F32, F16 or BF16), for i in [0, n).
void fill_normal(Key key, float stddev, DType dtype, void* device_out, int64_t n,
                 uint64_t first_index = 0);

// n elements of `dtype` equal to `value`, in device memory.
void fill_constant(float value, DType dtype, void* device_out, int64_t n);

// Free memory on the current CUDA device, in bytes (cudaMemGetInfo).
uint64_t free_memory_bytes();

}  // namespace eagerlm::rng::cuda
