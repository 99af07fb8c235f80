// Double-precision reference for GPT-2's tanh GELU, written exactly as the formula:
// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

namespace eagerlm::reference {

inline double gelu(double x) {
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

inline std::vector<double> gelu(const float* x, int64_t n) {
  std::vector<double> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) y[i] = gelu(double(x[i]));
  return y;
}

}  // namespace eagerlm::reference
