// Row-strided outputs for the matrix-product tests: y of m rows with stride ldy whose [m, n]
// block starts as NaN (the kernel must overwrite it without reading it) and whose padding holds
// a sentinel (the kernel must not touch it).
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace eagerlm::test {

constexpr float kPaddingSentinel = 12345.0f;

inline std::vector<float> make_strided_output(int64_t m, int64_t n, int64_t ldy) {
  std::vector<float> y(static_cast<size_t>(m * ldy), kPaddingSentinel);
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t c = 0; c < n; ++c) y[size_t(r * ldy + c)] = std::numeric_limits<float>::quiet_NaN();
  }
  return y;
}

// The dense [m, n] block of y; checks that its padding still holds the sentinel.
inline std::vector<float> dense_block(const std::vector<float>& y, int64_t m, int64_t n, int64_t ldy) {
  std::vector<float> block(static_cast<size_t>(m * n));
  bool padding_intact = true;
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t c = 0; c < ldy; ++c) {
      if (c < n) {
        block[size_t(r * n + c)] = y[size_t(r * ldy + c)];
      } else if (y[size_t(r * ldy + c)] != kPaddingSentinel) {
        padding_intact = false;
      }
    }
  }
  CHECK(padding_intact);
  return block;
}

inline std::vector<float> abs_of(const std::vector<float>& v) {
  std::vector<float> a(v.size());
  for (size_t i = 0; i < v.size(); ++i) a[i] = std::abs(v[i]);
  return a;
}

}  // namespace eagerlm::test
