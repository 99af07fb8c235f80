// The public face of engine/random/jax_primitives.h: arguments checked, errors translated.
#include <string>

#include "api/library_internal.h"
#include "eagerlm/jax_primitives.hpp"
#include "engine/core/error.h"
#include "engine/random/jax_primitives.h"

namespace eagerlm::jax {

namespace {

// Every pointer must be usable for n elements.
template <typename... Pointers>
void check_arrays(const char* function, int64_t n, Pointers... pointers) {
  if (n < 0) throw Error(ErrorCode::kInvalidArgument, std::string(function) + ": n must be >= 0, got " + std::to_string(n));
  if (n > 0 && ((pointers == nullptr) || ...))
    throw Error(ErrorCode::kInvalidArgument, std::string(function) + ": a null array for " + std::to_string(n) + " elements");
}

}  // namespace

void random_bits32(uint32_t k0, uint32_t k1, uint32_t* out, int64_t n) {
  library::translate_errors([&] {
    check_arrays("random_bits32", n, out);
    rng::jax_random_bits32({k0, k1}, out, n);
  });
}

void normal_f32(uint32_t k0, uint32_t k1, float scale, float* out, int64_t n) {
  library::translate_errors([&] {
    check_arrays("normal_f32", n, out);
    rng::jax_normal_f32({k0, k1}, scale, out, n);
  });
}

void uniform_f32(uint32_t k0, uint32_t k1, float lo, float width, float* out, int64_t n) {
  library::translate_errors([&] {
    check_arrays("uniform_f32", n, out);
    rng::jax_uniform_f32({k0, k1}, lo, width, out, n);
  });
}

void threefry2x32(const uint32_t* k0, const uint32_t* k1, const uint32_t* x0, const uint32_t* x1, uint32_t* y0,
                  uint32_t* y1, int64_t n) {
  library::translate_errors([&] {
    check_arrays("threefry2x32", n, k0, k1, x0, x1, y0, y1);
    rng::jax_threefry2x32(k0, k1, x0, x1, y0, y1, n);
  });
}

void erf_inv_f32(const float* in, float* out, int64_t n) {
  library::translate_errors([&] {
    check_arrays("erf_inv_f32", n, in, out);
    rng::jax_erf_inv_f32(in, out, n);
  });
}

void fma_f32(const float* a, const float* b, const float* c, float* out, int64_t n) {
  library::translate_errors([&] {
    check_arrays("fma_f32", n, a, b, c, out);
    rng::jax_fma_f32(a, b, c, out, n);
  });
}

}  // namespace eagerlm::jax
