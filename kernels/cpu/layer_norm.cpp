// layer_norm: per-row mean/variance normalisation with a learned affine map (ln_1, ln_2, ln_f).
// Two passes over each row (mean, then the variance of the centred values) so large means do
// not cancel the variance away. Both are simd::sum-style fixed-order vector reductions and the
// affine map is one vector expression for every element, so a row's result depends on its values
// alone: not on the row's address or alignment, its place in the batch or the number of rows
// (batch invariance; an auto-vectorized reduction may peel a misaligned row differently).
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cmath>

#include "kernels/common/dtype.h"
#include "kernels/common/weights.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/parallel.h"

#include "kernels/cpu/isa_begin.h"

#include "kernels/cpu/weight_vectors.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

namespace {

using simd::kLanes;
using simd::VecF;
constexpr WeightType kF32 = WeightType::kF32;

// Below this many elements one thread does it: an OpenMP region costs ~0.3 µs even when inactive.
constexpr int64_t kParallelElements = 32768;

void normalize_row(const float* x, const float* gamma, const float* beta, float* y, int64_t cols, float eps) {
  const float mean = simd::sum(x, cols) / static_cast<float>(cols);

  // Σ (x - mean)², the lanes of the partial last vector past cols kept at zero.
  const VecF mean_v = simd::splat(mean);
  VecF squares_v = simd::zero();
  int64_t c = 0;
  for (; c + kLanes <= cols; c += kLanes) {
    const VecF d = simd::load<kF32>(x + c) - mean_v;
    squares_v = simd::fma(d, d, squares_v);
  }
  const int rest = int(cols - c);
  if (rest > 0) {
    float means[kLanes];
    for (int l = 0; l < kLanes; ++l) means[l] = mean;
    const VecF d = simd::load_partial<kF32>(x + c, rest) - simd::load_partial<kF32>(means, rest);
    squares_v = simd::fma(d, d, squares_v);
  }
  const float squares = simd::reduce_add(squares_v);
  const float rstd = 1.0f / std::sqrt(squares / static_cast<float>(cols) + eps);

  // y may alias x: each vector is read before it is written.
  const VecF rstd_v = simd::splat(rstd);
  for (c = 0; c + kLanes <= cols; c += kLanes) {
    const VecF v = (simd::load<kF32>(x + c) - mean_v) * rstd_v;
    simd::store(y + c, simd::fma(v, simd::load<kF32>(gamma + c), simd::load<kF32>(beta + c)), kLanes);
  }
  if (rest > 0) {
    const VecF v = (simd::load_partial<kF32>(x + c, rest) - mean_v) * rstd_v;
    simd::store(y + c,
                simd::fma(v, simd::load_partial<kF32>(gamma + c, rest), simd::load_partial<kF32>(beta + c, rest)), rest);
  }
}

}  // namespace

void layer_norm(const float* x, const float* gamma, const float* beta, float* y, int64_t rows, int64_t cols,
                float eps) {
  if (rows <= 0 || cols <= 0) return;
  if (rows * cols <= kParallelElements) {
    for (int64_t r = 0; r < rows; ++r) {
      normalize_row(x + r * cols, gamma, beta, y + r * cols, cols, eps);
    }
    return;
  }
  parallel_ranges(rows, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) normalize_row(x + r * cols, gamma, beta, y + r * cols, cols, eps);
  });
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
