// Double-precision references for linear (y = x·w + bias, w [k, n]) and linear_transposed
// (y = x·wᵀ, w [n, k]). Results are dense [m, n].
#pragma once

#include <cstdint>
#include <vector>

namespace eagerlm::reference {

inline std::vector<double> linear(const float* x, int64_t ldx, const float* w, const float* bias, int64_t m, int64_t k,
                                  int64_t n) {
  std::vector<double> y(static_cast<size_t>(m * n));
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t c = 0; c < n; ++c) {
      double sum = bias ? bias[c] : 0.0;
      for (int64_t i = 0; i < k; ++i) sum += double(x[r * ldx + i]) * double(w[i * n + c]);
      y[r * n + c] = sum;
    }
  }
  return y;
}

inline std::vector<double> linear_transposed(const float* x, int64_t ldx, const float* w, int64_t m, int64_t k,
                                             int64_t n) {
  std::vector<double> y(static_cast<size_t>(m * n));
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t c = 0; c < n; ++c) {
      double sum = 0.0;
      for (int64_t i = 0; i < k; ++i) sum += double(x[r * ldx + i]) * double(w[c * k + i]);
      y[r * n + c] = sum;
    }
  }
  return y;
}

}  // namespace eagerlm::reference
