// Tests the vectorisable exp shared by gelu, softmax and attention: the tolerances of those ops
// assume its relative error is at most 2 ulp (2·2^-24; an exhaustive sweep over [-87.3, 88.3]
// measured 1.25), and that it flushes to 0 below ln(2^-126) ≈ -87.3365 rather than returning
// garbage from the exponent-bit construction.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/vec_exp.h"
#include "test/support/random.h"
#include "test/support/tolerance.h"

namespace test = eagerlm::test;
using eagerlm::cpu::detail::vec_exp;

TEST_CASE("vec_exp is within 2 ulp of exp over the normal range", "[kernels][exp]") {
  auto rng = test::test_rng(1);
  std::vector<float> x = test::random_floats(rng, 200000, -87.33f, 88.3f);
  for (float v : {0.0f, -0.0f, 1.0f, -1.0f, 1e-20f, -1e-20f, 0.5f, 88.0f, -87.0f, -87.33f}) x.push_back(v);
  std::vector<float> got(x.size());
  std::vector<double> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    got[i] = vec_exp(x[i]);
    want[i] = std::exp(double(x[i]));
  }
  test::check_close(got, want, 0.0, 2 * test::kFloatEps);
  CHECK(vec_exp(0.0f) == 1.0f);
}

TEST_CASE("vec_exp flushes tiny results to 0 and saturates large ones", "[kernels][exp]") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(vec_exp(-87.34f) == 0.0f);
  CHECK(vec_exp(-87.33f) >= std::ldexp(1.0f, -126));
  CHECK(vec_exp(-1000.0f) == 0.0f);
  CHECK(vec_exp(-inf) == 0.0f);
  CHECK(std::isfinite(vec_exp(1000.0f)));
  CHECK(vec_exp(1000.0f) > 1e38f);
  CHECK(std::isfinite(vec_exp(inf)));
}

TEST_CASE("vec_exp of NaN is NaN, without converting NaN to an integer", "[kernels][exp]") {
  // Weights may hold NaN (not a format error); the fuzzer found the exponent-bit construction
  // converting NaN to int32, which is undefined behaviour.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(std::isnan(vec_exp(nan)));
  CHECK(std::isnan(vec_exp(-nan)));
  CHECK(vec_exp(-std::numeric_limits<float>::infinity()) == 0.0f);
}
