// JAX's random and exact-rounding primitives over caller-owned arrays, bit for bit what
// jax.jit computes on an x86 CPU (threefry2x32 keys, partitionable mode). They are the engine
// under eagerlm.jax.init (the Python package), which evaluates an initializer's JAX program
// without compiling it; any caller holding raw keys may use them. Keys are threefry2x32 raw
// keys, [k0, k1] as jax.random.key_data holds them. Every function throws kInvalidArgument for
// a negative count or a null pointer with a positive count.
#pragma once

#include <cstdint>

#include "export.h"

namespace eagerlm::jax {

// jax.random.bits(key, shape, jnp.uint32) with n = prod(shape), row-major.
EAGERLM_API void random_bits32(uint32_t k0, uint32_t k1, uint32_t* out, int64_t n);
// jax.random.normal(key, shape, jnp.float32), row-major, as erfinv(u) · scale in one rounding:
// scale = float(sqrt(2)) gives the normal itself, and float(sqrt(2)) · c gives `normal * c` as
// jax.jit computes it (XLA folds the two constants into one before multiplying).
EAGERLM_API void normal_f32(uint32_t k0, uint32_t k1, float scale, float* out, int64_t n);
// jax.random.uniform(key, shape, jnp.float32, lo, hi) under jax.jit, row-major, with width =
// float(hi - lo): unit · width + lo in one rounding (XLA:CPU contracts it into an fma), then
// max(lo, ·).
EAGERLM_API void uniform_f32(uint32_t k0, uint32_t k1, float lo, float width, float* out, int64_t n);
// The threefry2x32 primitive, elementwise over n (key, counter) pairs: (y0, y1)[i] =
// threefry2x32((k0, k1)[i], (x0, x1)[i]).
EAGERLM_API void threefry2x32(const uint32_t* k0, const uint32_t* k1, const uint32_t* x0, const uint32_t* x1,
                              uint32_t* y0, uint32_t* y1, int64_t n);
// lax.erf_inv on float32: ±inf at ±1, NaN outside [-1, 1]. out may be in.
EAGERLM_API void erf_inv_f32(const float* in, float* out, int64_t n);
// a·b + c rounded once, elementwise: what XLA:CPU makes of a multiply whose only use is an add.
// out may be any of the inputs.
EAGERLM_API void fma_f32(const float* a, const float* b, const float* c, float* out, int64_t n);

}  // namespace eagerlm::jax
