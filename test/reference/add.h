// Double-precision reference for add: y[i] = a[i] + b[i].
#pragma once

#include <cstdint>
#include <vector>

namespace eagerlm::reference {

inline std::vector<double> add(const float* a, const float* b, int64_t n) {
  std::vector<double> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) y[i] = double(a[i]) + double(b[i]);
  return y;
}

}  // namespace eagerlm::reference
