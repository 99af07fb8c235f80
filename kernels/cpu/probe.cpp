// Machine probes for benchmarks: a memory-bound read and register-resident FMA chains, both at
// this variant's vector width (16 floats with AVX-512, 8 with AVX2, 4 otherwise), so that the
// limits `eagerlm bench` quotes are the ones the kernels it measures could reach.
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cstdint>
#include <vector>

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/parallel.h"

#include "kernels/cpu/isa_begin.h"

#include "kernels/cpu/bf16_gemm.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

namespace {

#if defined(EAGERLM_CPU_HAS_AVX512)
constexpr int kLanes = 16;
#elif defined(EAGERLM_CPU_ISA_AVX2) || defined(__AVX2__)
constexpr int kLanes = 8;
#else
constexpr int kLanes = 4;
#endif
typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));

}  // namespace

float read_sum(const float* data, int64_t n, int threads) {
  const Vec* vec = reinterpret_cast<const Vec*>(data);
  const int64_t nv = n / kLanes;
  // Through the kernels' own thread pool, as the products it is the floor of.
  const int64_t groups = nv / 4, parts = threads > 0 ? threads : 1;
  std::vector<float> partial(size_t(parts), 0.0f);
  parallel_for(
      parts,
      [&](int64_t p) {
        // Four vector accumulators: the loop is bound by memory, not by add latency.
        Vec s0 = {}, s1 = {}, s2 = {}, s3 = {};
        for (int64_t i = 4 * (groups * p / parts); i < 4 * (groups * (p + 1) / parts); i += 4) {
          s0 += vec[i];
          s1 += vec[i + 1];
          s2 += vec[i + 2];
          s3 += vec[i + 3];
        }
        const Vec s = s0 + s1 + s2 + s3;
        for (int k = 0; k < kLanes; ++k) partial[size_t(p)] += s[k];
      },
      int(parts));
  float total = 0;
  for (float t : partial) total += t;
  return total;
}

double fma_flops(int64_t iterations, int threads) {
  constexpr int kChains = 10;  // independent FMA chains hide the FMA latency on two pipes
  std::vector<float> guards(size_t(threads > 0 ? threads : 1), 0.0f);
  parallel_for(
      int64_t(guards.size()),
      [&](int64_t t) {
        const Vec zero = {};
        const Vec x = zero + 1e-3f, y = zero + 0.999999f;
        Vec a0 = zero, a1 = zero + 1, a2 = zero + 2, a3 = zero + 3, a4 = zero + 4;
        Vec a5 = zero + 5, a6 = zero + 6, a7 = zero + 7, a8 = zero + 8, a9 = zero + 9;
        for (int64_t i = 0; i < iterations; ++i) {
          a0 = a0 * y + x, a1 = a1 * y + x, a2 = a2 * y + x, a3 = a3 * y + x, a4 = a4 * y + x;
          a5 = a5 * y + x, a6 = a6 * y + x, a7 = a7 * y + x, a8 = a8 * y + x, a9 = a9 * y + x;
        }
        const Vec s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9;
        guards[size_t(t)] = s[0];
      },
      threads);
  float guard = 0;
  for (float g : guards) guard += g;
  // guard is a finite sum that never equals this; the comparison keeps the loop alive.
  const double flops = double(threads) * double(iterations) * kChains * kLanes * 2;
  return guard == 12345.0f ? -flops : flops;
}

double bf16_flops(int64_t iterations, int threads) {
#if defined(EAGERLM_CPU_HAS_AVX512BF16)
  const int parts = threads > 0 ? threads : 1;
#if defined(EAGERLM_CPU_HAS_AMX_GEMM)
  if (cpu::amx_enabled()) {
    // One round is 4 tile products of 16 × 16 × 32: 512 times a round of fma_flops's chains.
    const int64_t rounds = iterations / 32 + 1;
    std::vector<double> flops(size_t(parts), 0.0);
    parallel_for(
        parts, [&](int64_t t) { flops[size_t(t)] = amx_probe_flops(rounds); }, parts);
    double total = 0;
    for (double f : flops) total += f;
    return total;
  }
#endif
  constexpr int kChains = 10;
  std::vector<float> guards(size_t(parts), 0.0f);
  parallel_for(
      parts,
      [&](int64_t t) {
        const __m512bh x = (__m512bh)_mm512_set1_epi32(0x3A833A83), y = (__m512bh)_mm512_set1_epi32(0x3F7F3F7F);
        __m512 a[kChains];
        for (int c = 0; c < kChains; ++c) a[c] = _mm512_set1_ps(float(c));
        for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 10
          for (int c = 0; c < kChains; ++c) a[c] = _mm512_dpbf16_ps(a[c], x, y);
        }
        __m512 s = a[0];
        for (int c = 1; c < kChains; ++c) s = _mm512_add_ps(s, a[c]);
        alignas(64) float lanes[16];
        _mm512_store_ps(lanes, s);
        guards[size_t(t)] = lanes[0];
      },
      parts);
  float guard = 0;
  for (float g : guards) guard += g;
  const double flops = double(parts) * double(iterations) * kChains * 16 * 4;
  return guard == 12345.0f ? -flops : flops;
#else
  (void)iterations;
  (void)threads;
  return 0;
#endif
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
