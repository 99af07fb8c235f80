// layer_norm against the double reference, out of place and in place (y == x), for odd widths,
// inputs with a large mean (the two-pass variance must not cancel), and inputs whose variance is
// far below eps (so where eps enters the formula matters).
//
// Tolerance, first-order worst case per element, n = cols, u = 2^-24, exact μ, σ² and
// rstd = 1/√(σ² + eps) from the reference:
//   mean:  |δμ| <= (n + 1)·u·mean|x|                  (float sum of n terms, then a division)
//   rstd:  relative error <= (n/2 + 5)·u + δμ²/(2(σ² + eps))   (sum of n squares of centred values
//          with 2 roundings each: (n + 2)·u, halved by the square root; + eps, sqrt, 1/x)
//   y:     |err| <= rstd·|γ|·(|x - μ|·(ε_rstd + 3u) + |δμ|) + u·|y|   (centre, 2 products, add)
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "kernels/cpu/cpu_ops.h"
#include "test/reference/layer_norm.h"
#include "test/support/random.h"
#include "test/support/tolerance.h"

namespace ref = eagerlm::reference;
namespace test = eagerlm::test;

namespace {

std::vector<double> layer_norm_bound(const std::vector<float>& x, const std::vector<float>& gamma,
                                     const std::vector<double>& want, int64_t rows, int64_t cols, double eps) {
  const double u = test::kFloatEps;
  const double n = double(cols);
  std::vector<double> bound(want.size());
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x.data() + r * cols;
    double mean = 0.0, mean_abs = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      mean += row[c];
      mean_abs += std::abs(row[c]);
    }
    mean /= n;
    mean_abs /= n;
    double var = 0.0;
    for (int64_t c = 0; c < cols; ++c) var += (row[c] - mean) * (row[c] - mean);
    var /= n;
    const double rstd = 1.0 / std::sqrt(var + eps);
    const double mean_err = (n + 1) * u * mean_abs;
    const double rstd_err = (n / 2 + 5) * u + mean_err * mean_err / (2 * (var + eps));
    for (int64_t c = 0; c < cols; ++c) {
      const size_t i = size_t(r * cols + c);
      bound[i] = test::kFirstOrderMargin *
                 (rstd * std::abs(gamma[c]) * (std::abs(row[c] - mean) * (rstd_err + 3 * u) + mean_err) +
                  u * std::abs(want[i]));
    }
  }
  return bound;
}

}  // namespace

TEST_CASE("layer_norm matches the double reference", "[kernels][layer_norm]") {
  auto rng = test::test_rng(21);
  const float eps = 1e-5f;
  struct Input {
    float offset, spread;
  };
  // Centred data, a mean far from 0, and a variance (~3e-9) far below eps (centred, so the
  // mean-error term of the bound, amplified by rstd ≈ 300, stays small).
  const Input inputs[] = {{0.0f, 1.0f}, {3.0f, 0.5f}, {0.0f, 1e-4f}};
  for (const int64_t rows : {1, 3, 17, 129}) {
    for (const int64_t cols : {1, 3, 17, 63, 65, 768, 769}) {
      for (const Input& in : inputs) {
        INFO("rows=" << rows << " cols=" << cols << " offset=" << in.offset << " spread=" << in.spread);
        auto x = test::random_floats(rng, size_t(rows * cols), -in.spread, in.spread);
        for (float& v : x) v += in.offset;
        const auto gamma = test::random_floats(rng, size_t(cols), -2.0f, 2.0f);
        const auto beta = test::random_floats(rng, size_t(cols), -1.0f, 1.0f);
        const auto want = ref::layer_norm(x.data(), gamma.data(), beta.data(), rows, cols, eps);
        const auto bound = layer_norm_bound(x, gamma, want, rows, cols, eps);

        std::vector<float> y(x.size(), 7.0f);
        eagerlm::cpu::layer_norm(x.data(), gamma.data(), beta.data(), y.data(), rows, cols, eps);
        test::check_within(y, want, bound);

        auto in_place = x;
        eagerlm::cpu::layer_norm(in_place.data(), gamma.data(), beta.data(), in_place.data(), rows, cols, eps);
        test::check_within(in_place, want, bound);
      }
    }
  }
}
