// layer_norm: per-row mean/variance normalisation with a learned affine map (ln_1, ln_2, ln_f).
// Two passes over each row (mean, then the variance of the centred values) so large means do
// not cancel the variance away; each pass is a vectorised reduction.
#include <cmath>

#include "kernels/cpu/cpu_ops.h"

namespace eagerlm::cpu {

namespace {

// Below this many elements one thread does it: an OpenMP region costs ~0.3 µs even when inactive.
constexpr int64_t kParallelElements = 32768;

void normalize_row(const float* x, const float* gamma, const float* beta, float* y, int64_t cols,
                   float eps) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t c = 0; c < cols; ++c) sum += x[c];
  const float mean = sum / static_cast<float>(cols);

  float squares = 0.0f;
#pragma omp simd reduction(+ : squares)
  for (int64_t c = 0; c < cols; ++c) {
    const float d = x[c] - mean;
    squares += d * d;
  }
  const float rstd = 1.0f / std::sqrt(squares / static_cast<float>(cols) + eps);

  // y may alias x: element c is read only by iteration c, before it is written, so the loop
  // has no cross-iteration dependence and vectorises either way.
#pragma omp simd
  for (int64_t c = 0; c < cols; ++c) y[c] = (x[c] - mean) * rstd * gamma[c] + beta[c];
}

}  // namespace

void layer_norm(const float* x, const float* gamma, const float* beta, float* y, int64_t rows,
                int64_t cols, float eps) {
  if (rows <= 0 || cols <= 0) return;
  if (rows * cols <= kParallelElements) {
    for (int64_t r = 0; r < rows; ++r) {
      normalize_row(x + r * cols, gamma, beta, y + r * cols, cols, eps);
    }
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    normalize_row(x + r * cols, gamma, beta, y + r * cols, cols, eps);
  }
}

}  // namespace eagerlm::cpu
