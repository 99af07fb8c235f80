// Double-precision references for the typed-weight products: W given as its dequantized values
// (weights.h) in double, dense in its own layout. linear: W input-major [k, n], y = x·W + bias;
// linear_transposed: W output-major [n, k], y = x·Wᵀ. With absolute=true every term is taken by
// magnitude (Σ|x·w| + |b|), the scale the tests' error bounds multiply. Results are dense [m, n].
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace eagerlm::reference {

inline std::vector<double> linear_typed(const float* x, int64_t ldx, const std::vector<double>& w, const float* bias,
                                        int64_t m, int64_t k, int64_t n, bool absolute = false) {
  std::vector<double> y(static_cast<size_t>(m * n));
  auto f = [&](double v) { return absolute ? std::abs(v) : v; };
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t c = 0; c < n; ++c) {
      double sum = bias ? f(bias[c]) : 0.0;
      for (int64_t i = 0; i < k; ++i) sum += f(double(x[r * ldx + i]) * w[size_t(i * n + c)]);
      y[size_t(r * n + c)] = sum;
    }
  }
  return y;
}

inline std::vector<double> linear_transposed_typed(const float* x, int64_t ldx, const std::vector<double>& w, int64_t m,
                                                   int64_t k, int64_t n, bool absolute = false) {
  std::vector<double> y(static_cast<size_t>(m * n));
  auto f = [&](double v) { return absolute ? std::abs(v) : v; };
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t c = 0; c < n; ++c) {
      double sum = 0.0;
      for (int64_t i = 0; i < k; ++i) sum += f(double(x[r * ldx + i]) * w[size_t(c * k + i)]);
      y[size_t(r * n + c)] = sum;
    }
  }
  return y;
}

}  // namespace eagerlm::reference
