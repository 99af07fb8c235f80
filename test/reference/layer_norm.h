// Double-precision reference for layer_norm: (x - mean) / sqrt(var + eps) · gamma + beta per
// row, with the biased (population) variance. Result is dense [rows, cols].
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace eagerlm::reference {

inline std::vector<double> layer_norm(const float* x, const float* gamma, const float* beta, int64_t rows, int64_t cols,
                                      double eps) {
  std::vector<double> y(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    double mean = 0.0;
    for (int64_t c = 0; c < cols; ++c) mean += row[c];
    mean /= double(cols);
    double var = 0.0;
    for (int64_t c = 0; c < cols; ++c) var += (row[c] - mean) * (row[c] - mean);
    var /= double(cols);
    const double inv_std = 1.0 / std::sqrt(var + eps);
    for (int64_t c = 0; c < cols; ++c) {
      y[r * cols + c] = (row[c] - mean) * inv_std * double(gamma[c]) + double(beta[c]);
    }
  }
  return y;
}

}  // namespace eagerlm::reference
