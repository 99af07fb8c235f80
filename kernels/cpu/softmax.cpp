// softmax: row-wise, in place, with a per-row count of valid leading entries (the rest are
// masked to exactly 0). The row maximum is subtracted before exponentiating, so inputs of any
// magnitude stay finite. The sum is simd::sum's fixed order and the rest elementwise, so a row's
// result depends on its values alone, not on its address or the rows around it.
#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernels/common/dtype.h"
#include "kernels/common/weights.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/vec_exp.h"

#include "kernels/cpu/isa_begin.h"

#include "kernels/cpu/weight_vectors.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

namespace {

// Below this many elements one thread does it: an OpenMP region costs ~0.3 µs even when inactive.
constexpr int64_t kParallelElements = 16384;

void softmax_row(float* x, int64_t cols, int64_t valid) {
  if (valid > 0) {
    float row_max = x[0];
    // Written as a comparison: GCC 12 does not vectorise a std::max reduction.
#pragma omp simd reduction(max : row_max)
    for (int64_t c = 0; c < valid; ++c) row_max = x[c] > row_max ? x[c] : row_max;

    // exp(0) = 1 for the maximum, so sum >= 1 and the division below is safe.
#pragma omp simd
    for (int64_t c = 0; c < valid; ++c) x[c] = detail::vec_exp(x[c] - row_max);
    const float sum = simd::sum(x, valid);
    const float inv_sum = 1.0f / sum;
#pragma omp simd
    for (int64_t c = 0; c < valid; ++c) x[c] *= inv_sum;
  }
  std::fill(x + valid, x + cols, 0.0f);
}

}  // namespace

void softmax(float* x, int64_t rows, int64_t cols, const int32_t* valid) {
  if (rows <= 0 || cols <= 0) return;
  auto row = [&](int64_t r) {
    const int64_t n_valid = valid ? std::clamp<int64_t>(valid[r], 0, cols) : cols;
    softmax_row(x + r * cols, cols, n_valid);
  };
  if (rows * cols <= kParallelElements) {
    for (int64_t r = 0; r < rows; ++r) row(r);
    return;
  }
  parallel_ranges(rows, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) row(r);
  });
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
