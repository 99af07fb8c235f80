// softmax against the double reference: odd widths, random valid counts (0, partial, all), inputs
// up to ±80 (exp would overflow without subtracting the maximum), masked entries holding NaN
// (they must never be read) and coming out exactly 0, and rows with nothing valid all 0.
//
// Tolerance per valid element, first order, u = 2^-24, v = valid count, m = row max:
//   x - m rounds once: relative error |x - m|·u in e = exp(x - m); exp adds <= 2u (test_vec_exp);
//   the sum of v positive terms adds (v - 1)·u plus the weighted mean of its terms' errors;
//   the reciprocal and the product add 2u. So
//   |err_c| <= p_c·u·(|x_c - m| + Σ_j p_j·|x_j - m| + v + 6) + 2^-125,
// the last term for exp flushing results below 2^-126 (the smallest normal float) to 0, with a
// factor 2 of margin for the rounding of that threshold.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_ops.h"
#include "test/reference/softmax.h"
#include "test/support/random.h"
#include "test/support/tolerance.h"

namespace ref = eagerlm::reference;
namespace test = eagerlm::test;

namespace {

std::vector<double> softmax_bound(const std::vector<float>& x, const std::vector<double>& want, int64_t rows,
                                  int64_t cols, const int32_t* valid) {
  const double u = test::kFloatEps;
  std::vector<double> bound(want.size(), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = valid ? valid[r] : cols;
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < n; ++c) max = std::max(max, double(x[r * cols + c]));
    double mean_gap = 0.0;
    for (int64_t c = 0; c < n; ++c) mean_gap += want[r * cols + c] * (max - x[r * cols + c]);
    for (int64_t c = 0; c < n; ++c) {
      const size_t i = size_t(r * cols + c);
      bound[i] =
          test::kFirstOrderMargin * want[i] * u * ((max - x[i]) + mean_gap + double(n) + 6) + std::ldexp(1.0, -125);
    }
  }
  return bound;
}

// Runs the kernel and checks it; masked entries must be exactly 0, valid ones within the bound.
void check_softmax(std::vector<float> x, int64_t rows, int64_t cols, const int32_t* valid) {
  const auto want = ref::softmax(x.data(), rows, cols, valid);
  const auto bound = softmax_bound(x, want, rows, cols, valid);
  // Masked inputs are NaN or +inf (a max ignores NaN, but not +inf): reading any of them would
  // poison the whole row.
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = valid ? valid[r] : cols; c < cols; ++c) {
      x[r * cols + c] = (r + c) % 2 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
    }
  }
  eagerlm::cpu::softmax(x.data(), rows, cols, valid);
  test::check_within(x, want, bound);
  bool masked_zero = true;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = valid ? valid[r] : cols; c < cols; ++c) {
      masked_zero = masked_zero && x[r * cols + c] == 0.0f;
    }
  }
  CHECK(masked_zero);
}

}  // namespace

TEST_CASE("softmax matches the double reference", "[kernels][softmax]") {
  auto rng = test::test_rng(61);
  for (const int64_t rows : {1, 3, 17, 65}) {
    for (const int64_t cols : {1, 3, 17, 63, 64, 65, 769}) {
      for (const float range : {1.0f, 80.0f}) {
        INFO("rows=" << rows << " cols=" << cols << " range=" << range);
        const auto x = test::random_floats(rng, size_t(rows * cols), -range, range);
        check_softmax(x, rows, cols, nullptr);

        // Valid counts: 0, all, and random in between.
        std::uniform_int_distribution<int32_t> count(0, int32_t(cols));
        std::vector<int32_t> valid(static_cast<size_t>(rows));
        for (auto& v : valid) v = count(rng);
        valid[0] = 0;
        if (rows > 1) valid[1] = int32_t(cols);
        check_softmax(x, rows, cols, valid.data());
      }
    }
  }
}

TEST_CASE("softmax edge rows: constant, one huge, all masked", "[kernels][softmax]") {
  const int64_t cols = 5;
  const std::vector<float> x = {
      2.0f,  2.0f,   2.0f, 2.0f,  2.0f,   // uniform: 1/5 each
      80.0f, -80.0f, 0.0f, 79.0f, -1.0f,  // dominated by two entries
      1.0f,  2.0f,   3.0f, 4.0f,  5.0f,   // nothing valid
  };
  const std::vector<int32_t> valid = {5, 4, 0};
  check_softmax(x, 3, cols, valid.data());

  auto y = x;
  eagerlm::cpu::softmax(y.data(), 3, cols, valid.data());
  for (int64_t c = 0; c < cols; ++c) CHECK(y[2 * cols + c] == 0.0f);
  for (float v : y) CHECK(std::isfinite(v));
}
