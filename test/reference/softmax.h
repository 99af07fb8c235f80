// Double-precision reference for the masked row softmax: row r normalises its first valid[r]
// entries (all when valid is null); the rest, and rows with valid[r] == 0, are 0.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace eagerlm::reference {

inline std::vector<double> softmax(const float* x, int64_t rows, int64_t cols, const int32_t* valid) {
  std::vector<double> y(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = valid ? valid[r] : cols;
    if (n <= 0) continue;
    const float* row = x + r * cols;
    const double max = *std::max_element(row, row + n);
    double sum = 0.0;
    for (int64_t c = 0; c < n; ++c) sum += std::exp(double(row[c]) - max);
    for (int64_t c = 0; c < n; ++c) y[r * cols + c] = std::exp(double(row[c]) - max) / sum;
  }
  return y;
}

}  // namespace eagerlm::reference
