#include "engine/random/jax_primitives.h"

#include "kernels/cpu/cpu_ops.h"

namespace eagerlm::rng {

void jax_random_bits32(Key key, uint32_t* out, int64_t n) { cpu::fill_random_bits32(key, out, n, 0); }

void jax_normal_f32(Key key, float scale, float* out, int64_t n) { cpu::fill_erfinv_scaled_f32(key, scale, out, n, 0); }

void jax_uniform_f32(Key key, float lo, float width, float* out, int64_t n) {
  cpu::fill_uniform_f32(key, lo, width, out, n, 0);
}

void jax_threefry2x32(const uint32_t* k0, const uint32_t* k1, const uint32_t* x0, const uint32_t* x1, uint32_t* y0,
                      uint32_t* y1, int64_t n) {
  // Keys are split and folded a few at a time: a plain loop is enough.
  for (int64_t i = 0; i < n; ++i) {
    const Block b = threefry2x32({k0[i], k1[i]}, {x0[i], x1[i]});
    y0[i] = b.x0;
    y1[i] = b.x1;
  }
}

void jax_erf_inv_f32(const float* in, float* out, int64_t n) { cpu::erf_inv_f32(in, out, n); }

void jax_fma_f32(const float* a, const float* b, const float* c, float* out, int64_t n) {
  cpu::fma_f32(a, b, c, out, n);
}

}  // namespace eagerlm::rng
