// linear and linear_transposed against double references: single rows (the sgemv path) and
// several rows (sgemm), with and without bias, and row strides wider than the rows.
//
// Tolerance: a float sum of k products plus a bias, in any order (BLAS picks its own), is within
// γ(k+1)·(Σ|xᵢ·wᵢ| + |b|) of the exact value, γ(n) = n·u/(1 - n·u) ≈ n·u with u = 2^-24. Each
// element gets bound (k+2)·u·(Σ|x·w| + |b|), the Σ computed by running the reference on |x|, |w|,
// |b| (the extra 1 covers the division in γ). Elements of y outside [m, n] must be untouched and
// the old contents of y (NaN) must not leak into the result.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/cpu_ops.h"
#include "test/kernels/strided_output.h"
#include "test/reference/linear.h"
#include "test/support/random.h"
#include "test/support/tolerance.h"

namespace ref = eagerlm::reference;
namespace test = eagerlm::test;

namespace {

struct Shape {
  int64_t m, k, n, x_pad, y_pad;
};

const Shape kShapes[] = {
    {1, 1, 1, 0, 0},   {1, 17, 3, 0, 0},    {1, 769, 65, 3, 5},  {1, 63, 127, 1, 0}, {3, 17, 1, 0, 2},
    {3, 65, 63, 5, 1}, {17, 127, 65, 0, 0}, {65, 769, 17, 7, 3}, {2, 3, 769, 1, 1},  {127, 1, 3, 2, 0},
};

std::vector<double> dot_bound(const std::vector<double>& abs_sum, int64_t k) {
  std::vector<double> bound(abs_sum.size());
  for (size_t i = 0; i < bound.size(); ++i) bound[i] = double(k + 2) * test::kFloatEps * abs_sum[i];
  return bound;
}

}  // namespace

TEST_CASE("linear matches the double reference", "[kernels][linear]") {
  auto rng = test::test_rng(11);
  for (const Shape& s : kShapes) {
    for (const bool with_bias : {false, true}) {
      INFO("m=" << s.m << " k=" << s.k << " n=" << s.n << " ldx=" << s.k + s.x_pad << " ldy=" << s.n + s.y_pad
                << " bias=" << with_bias);
      const int64_t ldx = s.k + s.x_pad, ldy = s.n + s.y_pad;
      const auto x = test::random_floats(rng, size_t(s.m * ldx), -1.0f, 1.0f);
      const auto w = test::random_floats(rng, size_t(s.k * s.n), -1.0f, 1.0f);
      const auto bias = test::random_floats(rng, size_t(s.n), -1.0f, 1.0f);
      const float* b = with_bias ? bias.data() : nullptr;
      auto y = test::make_strided_output(s.m, s.n, ldy);

      eagerlm::cpu::linear(x.data(), ldx, w.data(), b, y.data(), ldy, s.m, s.k, s.n);

      const auto want = ref::linear(x.data(), ldx, w.data(), b, s.m, s.k, s.n);
      const auto ax = test::abs_of(x), aw = test::abs_of(w), ab = test::abs_of(bias);
      const auto abs_sum = ref::linear(ax.data(), ldx, aw.data(), with_bias ? ab.data() : nullptr, s.m, s.k, s.n);
      test::check_within(test::dense_block(y, s.m, s.n, ldy), want, dot_bound(abs_sum, s.k));
    }
  }
}

TEST_CASE("linear_transposed matches the double reference", "[kernels][linear]") {
  auto rng = test::test_rng(12);
  for (const Shape& s : kShapes) {
    INFO("m=" << s.m << " k=" << s.k << " n=" << s.n << " ldx=" << s.k + s.x_pad << " ldy=" << s.n + s.y_pad);
    const int64_t ldx = s.k + s.x_pad, ldy = s.n + s.y_pad;
    const auto x = test::random_floats(rng, size_t(s.m * ldx), -1.0f, 1.0f);
    const auto w = test::random_floats(rng, size_t(s.n * s.k), -1.0f, 1.0f);
    auto y = test::make_strided_output(s.m, s.n, ldy);

    eagerlm::cpu::linear_transposed(x.data(), ldx, w.data(), y.data(), ldy, s.m, s.k, s.n);

    const auto want = ref::linear_transposed(x.data(), ldx, w.data(), s.m, s.k, s.n);
    const auto ax = test::abs_of(x), aw = test::abs_of(w);
    const auto abs_sum = ref::linear_transposed(ax.data(), ldx, aw.data(), s.m, s.k, s.n);
    test::check_within(test::dense_block(y, s.m, s.n, ldy), want, dot_bound(abs_sum, s.k));
  }
}

TEST_CASE("linear with k == 0 leaves the bias", "[kernels][linear]") {
  const std::vector<float> bias = {1.5f, -2.0f, 0.25f};
  const float x = 0.0f, w = 0.0f;
  for (const int64_t m : {1, 4}) {
    auto y = test::make_strided_output(m, 3, 3);
    eagerlm::cpu::linear(&x, 1, &w, bias.data(), y.data(), 3, m, 0, 3);
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t c = 0; c < 3; ++c) CHECK(y[r * 3 + c] == bias[c]);
    }
    eagerlm::cpu::linear(&x, 1, &w, nullptr, y.data(), 3, m, 0, 3);
    for (float v : y) CHECK(v == 0.0f);
  }
}
