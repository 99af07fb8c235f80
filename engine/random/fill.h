// Filling parameter memory on the CPU: JAX-compatible normal values (see normal.h) and constants.
// Multi-threaded (OpenMP) and SIMD-vectorized, writing each output element exactly once.
#pragma once

#include <cstdint>

#include "engine/core/dtype.h"
#include "engine/random/threefry.h"

namespace eagerlm::rng {

// out[i] = element (first_index + i) of jax.random.normal(key, shape, float32) * stddev, for
// i in [0, n). first_index lets a caller fill one tensor in pieces (for progress reports); the
// values never depend on how it is split or on the thread count.
void fill_normal_f32(Key key, float stddev, float* out, int64_t n, uint64_t first_index = 0);

// The same float32 values, stored as `dtype` (F32, F16 or BF16; round to nearest even).
void fill_normal(Key key, float stddev, DType dtype, void* out, int64_t n,
                 uint64_t first_index = 0);

// n elements of `dtype` all equal to `value` (rounded to nearest even for F16/BF16).
void fill_constant(float value, DType dtype, void* out, int64_t n);

}  // namespace eagerlm::rng
