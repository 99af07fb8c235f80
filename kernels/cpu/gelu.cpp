// gelu: GPT-2's tanh-approximated GELU, elementwise over the MLP's hidden activations.
// Uses the identity 0.5·(1 + tanh(z)) = 1 / (1 + e^(-2z)), so
//   gelu(x) = x / (1 + exp(-2·√(2/π)·(x + 0.044715·x³))),
// which needs one vectorisable exp and never cancels (1 + tanh(z) for very negative z would lose
// every digit; here large negative x just divides by a large number).
#include <algorithm>

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/vec_exp.h"

#include "kernels/cpu/isa_begin.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

namespace {

// Below this many elements one thread does it (an OpenMP region costs ~0.3 µs even inactive).
constexpr int64_t kParallelElements = 16384;
constexpr int64_t kChunk = 8192;                              // elements per parallel work unit
constexpr float kMinusTwoSqrt2OverPi = -1.5957691216057308f;  // -2·√(2/π)
constexpr float kCubic = 0.044715f;

void gelu_range(const float* x, float* y, int64_t begin, int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) {
    const float v = x[i];  // y may alias x: read first
    const float minus_2z = kMinusTwoSqrt2OverPi * (v + kCubic * v * v * v);
    y[i] = v / (1.0f + detail::vec_exp(minus_2z));
  }
}

}  // namespace

void gelu(const float* x, float* y, int64_t n) {
  if (n <= kParallelElements) {
    gelu_range(x, y, 0, n);
    return;
  }
  parallel_ranges(n, [&](int64_t i0, int64_t i1) { gelu_range(x, y, i0, i1); }, kChunk);
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
