// Elementwise float32 ops that must round exactly as XLA:CPU does (see cpu_ops.h): erfinv with
// XLA's operation sequence (kernels/common/random/normal.h) and a fused multiply-add that rounds
// once. Compiled with -ffp-contract=off (CMakeLists.txt) so nothing else fuses; the loops are
// plain, for the compiler to vectorize at this variant's width.
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/common/random/normal.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/parallel.h"

#include "kernels/cpu/isa_begin.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

namespace {
// One contiguous range per thread, boundaries at 16 elements (no shared cache lines).
template <typename Body>
void elementwise_ranges(int64_t n, const Body& body) {
  parallel_ranges(n, body, 16, threads_for(n));
}
}  // namespace

void erf_inv_f32(const float* in, float* out, int64_t n) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  elementwise_ranges(n, [&](int64_t i0, int64_t i1) {
#pragma omp simd
    for (int64_t i = i0; i < i1; ++i) {
      const float x = in[i];
      // normal.h's erfinv covers [-1, 1] (its log1p needs -x² in [-1, 0]); XLA gives NaN outside.
      const float inside = rng::fp::abs(x) <= 1.0f ? x : 0.0f;
      const float y = rng::erfinv_f32(inside);
      out[i] = rng::fp::abs(x) <= 1.0f ? y : nan;
    }
  });
}

void fma_f32(const float* a, const float* b, const float* c, float* out, int64_t n) {
  elementwise_ranges(n, [&](int64_t i0, int64_t i1) {
#pragma omp simd
    for (int64_t i = i0; i < i1; ++i) out[i] = std::fma(a[i], b[i], c[i]);
  });
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
