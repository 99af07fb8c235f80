// jax.random.normal for float32, one element at a time, from the element's 32 random bits:
// bits -> uniform float in [nextafter(-1, 0), 1) -> sqrt(2) * erfinv(u).
//
// JAX lowers erfinv to Giles' single-precision polynomial ("Approximating the erfinv function",
// 2010) around w = -log1p(-u*u), and XLA:CPU evaluates log1p with a Cephes rational function
// for |x| < sqrt(2) - 1 and log(1 + x) otherwise, log being Cephes' polynomial as XLA emits it.
// This file follows that operation sequence exactly (same float32 constants, same order, FMA
// where XLA:CPU's LLVM backend contracts a multiply into an add). Against JAX 0.10.2 on an
// x86 CPU with FMA the values are bit-identical for all 2^23 possible uniform inputs (the
// normal depends on the top 23 bits only); the promised bound is 2 ulp. (XLA's log1p itself is
// within 2 ulp of the correctly rounded value, which is why "within 2 ulp" is the contract.)
//
// Every operation is spelled out (fp::add, fp::mul, fp::fma, ...) and rounds exactly once, the
// same way on x86 and on CUDA, so CPU and GPU results are identical. Host translation units
// that evaluate these functions must be compiled with -ffp-contract=off (the CMake target
// eagerlm_random_exact_fp carries it); CUDA code uses explicitly rounded intrinsics, which the
// compiler never fuses (the PTX is the same with --fmad=true or false).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/common/host_device.h"
#include "kernels/common/random/threefry.h"

namespace eagerlm::rng {

// Float operations with exactly one IEEE round-to-nearest-even rounding each.
namespace fp {
#if defined(__CUDA_ARCH__)
__device__ inline float add(float a, float b) { return __fadd_rn(a, b); }
__device__ inline float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ inline float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ inline float div(float a, float b) { return __fdiv_rn(a, b); }
__device__ inline float fma(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ inline float sqrt(float a) { return __fsqrt_rn(a); }
__device__ inline uint32_t to_bits(float f) { return __float_as_uint(f); }
__device__ inline float from_bits(uint32_t u) { return __uint_as_float(u); }
#else
inline float add(float a, float b) { return a + b; }
inline float sub(float a, float b) { return a - b; }
inline float mul(float a, float b) { return a * b; }
inline float div(float a, float b) { return a / b; }
inline float fma(float a, float b, float c) { return std::fma(a, b, c); }
inline float sqrt(float a) { return std::sqrt(a); }
inline uint32_t to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
#endif
EAGERLM_HOST_DEVICE inline float abs(float a) { return from_bits(to_bits(a) & 0x7fffffffu); }
}  // namespace fp

// The lower end of JAX's normal sampler's uniform range: nextafter(-1.0f, 0.0f).
constexpr float kUniformLow = -0x1.fffffep-1f;
// np.float32(np.sqrt(2)), the factor jax.random.normal applies after erfinv.
constexpr float kSqrt2 = 0x1.6a09e6p+0f;

// jax.random.uniform(key, (), float32, kUniformLow, 1.0) given the element's 32 bits: the top 23
// bits become the mantissa of a float in [1, 2); subtracting 1 gives [0, 1) exactly; then
// unit * (1 - kUniformLow) + kUniformLow, where 1 - kUniformLow rounds to 2.0f so the product is
// exact and only the addition rounds; finally JAX's max(kUniformLow, ·).
EAGERLM_HOST_DEVICE inline float uniform_pm1_from_bits(uint32_t bits) {
  const float one_to_two = fp::from_bits((bits >> 9) | 0x3f800000u);
  const float unit = fp::sub(one_to_two, 1.0f);
  const float u = fp::add(fp::mul(unit, 2.0f), kUniformLow);
  return u < kUniformLow ? kUniformLow : u;
}

// jax.random.uniform(key, shape, float32, lo, hi) under jax.jit, given the element's 32 bits and
// width = float(hi - lo): unit in [0, 1) as above, `unit * width + lo` as the one fma XLA:CPU
// contracts it into, then JAX's max(lo, ·) with NumPy's and XLA's NaN rule (a NaN sum wins).
EAGERLM_HOST_DEVICE inline float uniform_from_bits(uint32_t bits, float lo, float width) {
  const float unit = fp::sub(fp::from_bits((bits >> 9) | 0x3f800000u), 1.0f);
  const float u = fp::fma(unit, width, lo);
  return (lo >= u || lo != lo) ? lo : u;
}

// Natural log of a positive, normal, finite float as XLA:CPU computes it (Cephes): x = m·2^e
// with m in [sqrt(1/2), sqrt(2)), log(m) by a degree-8 polynomial in t = m - 1, and e·ln 2 added
// in two parts (0.693359375 + -2.12194440e-4). No special cases: the caller guarantees the domain.
EAGERLM_HOST_DEVICE inline float log_positive_normal(float x) {
  constexpr float p0 = 0x1.204376p-4f, p1 = -0x1.d7a370p-4f, p2 = 0x1.de4a34p-4f;
  constexpr float p3 = -0x1.fcba9ep-4f, p4 = 0x1.23d37ep-3f, p5 = -0x1.555ca0p-3f;
  constexpr float p6 = 0x1.999d58p-3f, p7 = -0x1.fffff8p-3f, p8 = 0x1.555554p-2f;
  constexpr float ln2_low = -0x1.bd0106p-13f, ln2_high = 0x1.63p-1f;
  constexpr float sqrt_half = 0x1.6a09e6p-1f;

  const uint32_t xb = fp::to_bits(x);
  const float m = fp::from_bits((xb & 0x807fffffu) | 0x3f000000u);  // mantissa in [0.5, 1)
  float e = fp::add(1.0f, float(int32_t(xb >> 23) - 127));
  const bool below = m < sqrt_half;  // then use 2m in [1, sqrt(2)) and e - 1
  float t = fp::sub(m, 1.0f);
  e = fp::sub(e, below ? 1.0f : 0.0f);
  t = fp::add(t, below ? m : 0.0f);

  const float t2 = fp::mul(t, t);
  const float t3 = fp::mul(t2, t);
  float y = fp::fma(t, p0, p1);
  float y1 = fp::fma(t, p3, p4);
  float y2 = fp::fma(t, p6, p7);
  y = fp::fma(y, t, p2);
  y1 = fp::fma(y1, t, p5);
  y2 = fp::fma(y2, t, p8);
  y = fp::fma(y, t3, y1);
  y = fp::fma(y, t3, y2);
  y = fp::fma(y, t3, fp::mul(ln2_low, e));
  t = fp::sub(t, fp::mul(0.5f, t2));  // 0.5·t2 is exact
  t = fp::add(t, y);
  return fp::fma(ln2_high, e, t);
}

// log1p(x) for x in (-1, 0] (all that erfinv needs) as XLA:CPU computes it: a Cephes rational
// approximation x - x²/2 + x³·N(x)/D(x) for |x| < sqrt(2) - 1, else log(1 + x).
EAGERLM_HOST_DEVICE inline float log1p_f32(float x) {
  constexpr float n0 = 0x1.7bc096p-15f, n1 = 0x1.fe818ap-2f, n2 = 0x1.a509f4p+2f, n3 = 0x1.de9738p+4f,
                  n4 = 0x1.e798ecp+5f, n5 = 0x1.c8e75ap+5f, n6 = 0x1.40a202p+4f;
  constexpr float d1 = 0x1.e2035ap+3f, d2 = 0x1.4c30b6p+6f, d3 = 0x1.bb865ap+7f, d4 = 0x1.351946p+8f,
                  d5 = 0x1.b0db14p+7f, d6 = 0x1.e0f304p+5f;
  constexpr float small_limit = 0x1.a8279ap-2f;  // sqrt(2) - 1

  const float via_log = log_positive_normal(fp::add(x, 1.0f));

  const float x2 = fp::mul(x, x);
  float num = n0;
  num = fp::fma(num, x, n1);
  num = fp::fma(num, x, n2);
  num = fp::fma(num, x, n3);
  num = fp::fma(num, x, n4);
  num = fp::fma(num, x, n5);
  num = fp::fma(num, x, n6);
  float den = 1.0f;
  den = fp::fma(den, x, d1);
  den = fp::fma(den, x, d2);
  den = fp::fma(den, x, d3);
  den = fp::fma(den, x, d4);
  den = fp::fma(den, x, d5);
  den = fp::fma(den, x, d6);
  float rational = fp::mul(fp::mul(x, x2), fp::div(num, den));
  rational = fp::add(fp::mul(-0.5f, x2), rational);  // -0.5·x2 is exact
  rational = fp::add(x, rational);

  return fp::abs(x) < small_limit ? rational : via_log;
}

// erfinv(x) for x in [-1, 1], float32, Giles' approximation as XLA lowers it:
// w = -log1p(-x²); p(w - 2.5) for w < 5, else p'(sqrt(w) - 3); result p·x; ±inf at ±1.
// Split in two so that vectorized callers can run each half as its own loop (fewer live
// registers); erfinv_f32 is the composition.
EAGERLM_HOST_DEVICE inline float erfinv_w(float x) { return -log1p_f32(fp::mul(x, -x)); }

EAGERLM_HOST_DEVICE inline float erfinv_from_w(float x, float w) {
  constexpr float a[9] = {0x1.e2cb10p-26f,  0x1.70966cp-22f, -0x1.d8e6aep-19f, -0x1.26b582p-18f, 0x1.ca65b6p-13f,
                          -0x1.48a810p-10f, -0x1.11c9dep-8f, 0x1.f91ec6p-3f,   0x1.805c5ep+0f};
  constexpr float b[9] = {-0x1.a3e136p-13f, 0x1.a76ad6p-14f, 0x1.61b8e4p-10f, -0x1.e17bcep-9f, 0x1.7824f6p-8f,
                          -0x1.f38baep-8f,  0x1.354afcp-7f,  0x1.006db6p+0f,  0x1.6a9efcp+1f};
  const bool central = w < 5.0f;
  const float w_central = fp::add(w, -2.5f);
  const float w_tail = fp::add(fp::sqrt(w), -3.0f);
  const float v = central ? w_central : w_tail;
  float p = central ? a[0] : b[0];
  // Written out (not a loop) so that compilers vectorize the caller's loop around it.
  p = fp::fma(p, v, central ? a[1] : b[1]);
  p = fp::fma(p, v, central ? a[2] : b[2]);
  p = fp::fma(p, v, central ? a[3] : b[3]);
  p = fp::fma(p, v, central ? a[4] : b[4]);
  p = fp::fma(p, v, central ? a[5] : b[5]);
  p = fp::fma(p, v, central ? a[6] : b[6]);
  p = fp::fma(p, v, central ? a[7] : b[7]);
  p = fp::fma(p, v, central ? a[8] : b[8]);
  const float result = fp::mul(p, x);
  return fp::abs(x) == 1.0f ? fp::mul(x, fp::from_bits(0x7f800000u)) : result;
}

EAGERLM_HOST_DEVICE inline float erfinv_f32(float x) { return erfinv_from_w(x, erfinv_w(x)); }

// The last step of jax.random.normal: sqrt(2)·erfinv(u), then JAX users' `* stddev`.
EAGERLM_HOST_DEVICE inline float scaled_normal_from_erfinv(float erfinv_u, float stddev) {
  return fp::mul(fp::mul(erfinv_u, kSqrt2), stddev);
}

// One float32 of jax.random.normal(key, shape, jnp.float32) from the element's bits.
EAGERLM_HOST_DEVICE inline float normal_from_bits(uint32_t bits) {
  return fp::mul(erfinv_f32(uniform_pm1_from_bits(bits)), kSqrt2);
}

// Element `index` (row-major) of jax.random.normal(key, shape, jnp.float32), any shape.
EAGERLM_HOST_DEVICE inline float normal_at(Key key, uint64_t index) {
  return normal_from_bits(random_bits32(key, index));
}

// Element `index` of `jax.random.normal(key, shape, jnp.float32) * stddev` with stddev a Python
// float (JAX converts it to float32, then one float32 multiply).
EAGERLM_HOST_DEVICE inline float scaled_normal_at(Key key, uint64_t index, float stddev) {
  return fp::mul(normal_at(key, index), stddev);
}

}  // namespace eagerlm::rng
