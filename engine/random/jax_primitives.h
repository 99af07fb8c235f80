// JAX's random and exact-rounding primitives on host arrays, for evaluating JAX programs outside
// XLA (eagerlm.jax.init): every value is the one jax.jit gives on an x86 CPU, bit for bit. The
// hot ones run on the dispatched CPU kernels (threads, this machine's vector width).
#pragma once

#include <cstdint>

#include "kernels/common/random/threefry.h"

namespace eagerlm::rng {

// jax.random.bits(key, shape, uint32), flattened: out[i] = random_bits32(key, i).
void jax_random_bits32(Key key, uint32_t* out, int64_t n);
// jax.random.normal(key, shape, float32) flattened, computed as erfinv(u) · scale: scale =
// float(sqrt(2)) is the normal itself; float(sqrt(2)) · c is `normal * c` as jax.jit computes it.
void jax_normal_f32(Key key, float scale, float* out, int64_t n);
// jax.random.uniform(key, shape, float32, lo, hi) flattened, as jax.jit computes it, with
// width = float(hi - lo).
void jax_uniform_f32(Key key, float lo, float width, float* out, int64_t n);
// The threefry2x32 primitive on n counters, each with its own key (callers broadcast).
void jax_threefry2x32(const uint32_t* k0, const uint32_t* k1, const uint32_t* x0, const uint32_t* x1, uint32_t* y0,
                      uint32_t* y1, int64_t n);
// lax.erf_inv on float32 (±inf at ±1, NaN outside [-1, 1]).
void jax_erf_inv_f32(const float* in, float* out, int64_t n);
// a·b + c rounded once: XLA:CPU contracts a multiply that feeds an add into this.
void jax_fma_f32(const float* a, const float* b, const float* c, float* out, int64_t n);

}  // namespace eagerlm::rng
