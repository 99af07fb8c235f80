// gelu against the double reference (the tanh formula verbatim), out of place and in place.
//
// The kernel computes y = x / (1 + E), E = exp(a), a = -2·√(2/π)·(x + 0.044715·x³). Per element,
// first order, u = 2^-24: a carries relative error <= 6u (x³: 2 roundings, the cubic coefficient,
// the sum, the constant and its product), exp adds <= 2u (see test_vec_exp), so E has relative
// error <= 6u·|a| + 2u; y's relative sensitivity to E is E/(1 + E) <= 1, plus 2u for the sum and
// the division:
//   |err| <= |y|·(E/(1 + E)·(6u·|a| + 2u) + 2u) + |x|·2^-126·4 + |x|·2^-52,
// the |x|·2^-124 term covering exp saturating at ~2.2e38 for a > 88.3 (where |y| < |x|/2.2e38),
// and |x|·2^-52 the reference's own error: it evaluates 1 + tanh(z) in double as written, which
// cancels for very negative x (tanh rounds to within 2^-53 of -1, so 0.5·|x|·(1 + tanh) is only
// good to about |x|·2^-53 absolute; for x < -7 the reference returns 0).
// Where |a| is large y is tiny, so this stays below ~2e-6 absolute + relative everywhere.
#include <catch2/catch.hpp>
#include <cmath>
#include <numbers>
#include <vector>

#include "kernels/cpu/cpu_ops.h"
#include "test/reference/gelu.h"
#include "test/support/random.h"
#include "test/support/tolerance.h"

namespace ref = eagerlm::reference;
namespace test = eagerlm::test;

namespace {

std::vector<double> gelu_bound(const std::vector<float>& x, const std::vector<double>& want) {
  const double u = test::kFloatEps;
  std::vector<double> bound(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    const double a = -2.0 * std::sqrt(2.0 / std::numbers::pi) * (v + 0.044715 * v * v * v);
    const double weight = a > 0 ? 1.0 / (1.0 + std::exp(-a)) : std::exp(a) / (1.0 + std::exp(a));
    bound[i] = test::kFirstOrderMargin * std::abs(want[i]) * (weight * (6 * u * std::abs(a) + 2 * u) + 2 * u) +
               std::abs(v) * (std::ldexp(4.0, -126) + std::ldexp(1.0, -52));
  }
  return bound;
}

void check_gelu(const std::vector<float>& x) {
  const auto want = ref::gelu(x.data(), int64_t(x.size()));
  const auto bound = gelu_bound(x, want);
  std::vector<float> y(x.size());
  eagerlm::cpu::gelu(x.data(), y.data(), int64_t(x.size()));
  test::check_within(y, want, bound);
  auto in_place = x;
  eagerlm::cpu::gelu(in_place.data(), in_place.data(), int64_t(in_place.size()));
  test::check_within(in_place, want, bound);
}

}  // namespace

TEST_CASE("gelu matches the double reference", "[kernels][gelu]") {
  auto rng = test::test_rng(31);
  for (const int64_t n : {1, 3, 17, 63, 65, 127, 769, 100003}) {
    for (const float range : {0.01f, 4.0f, 12.0f}) {
      INFO("n=" << n << " range=" << range);
      check_gelu(test::random_floats(rng, size_t(n), -range, range));
    }
  }
}

TEST_CASE("gelu handles zeros, tiny and huge inputs", "[kernels][gelu]") {
  check_gelu({0.0f, -0.0f, 1e-30f, -1e-30f, 1e-8f, -1e-8f, 5.0f, -5.0f, 9.0f, -9.0f, 30.0f, -30.0f, 1e4f, -1e4f, 1e20f,
              -1e20f});
  std::vector<float> y(1);
  const float big = 1e20f;
  eagerlm::cpu::gelu(&big, y.data(), 1);
  CHECK(y[0] == big);  // x³ overflows to inf in float; the result must still be x
}
