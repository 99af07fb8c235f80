// add against the double reference, out of place and with y aliasing either input. A float sum
// is correctly rounded: |fl(a + b) - (a + b)| <= u·|a + b|, u = 2^-24, so the bound is exactly
// that.
#include <catch2/catch.hpp>
#include <vector>

#include "kernels/cpu/cpu_ops.h"
#include "test/reference/add.h"
#include "test/support/random.h"
#include "test/support/tolerance.h"

namespace ref = eagerlm::reference;
namespace test = eagerlm::test;

TEST_CASE("add matches the double reference, also in place", "[kernels][add]") {
  auto rng = test::test_rng(41);
  for (const int64_t n : {1, 3, 17, 63, 65, 127, 769, 200003}) {
    INFO("n=" << n);
    const auto a = test::random_floats(rng, size_t(n), -100.0f, 100.0f);
    const auto b = test::random_floats(rng, size_t(n), -1.0f, 1.0f);
    const auto want = ref::add(a.data(), b.data(), n);

    std::vector<float> y(size_t(n), 3.0f);
    eagerlm::cpu::add(a.data(), b.data(), y.data(), n);
    test::check_close(y, want, 0.0, test::kFloatEps);

    auto into_a = a;
    eagerlm::cpu::add(into_a.data(), b.data(), into_a.data(), n);
    test::check_close(into_a, want, 0.0, test::kFloatEps);

    auto into_b = b;
    eagerlm::cpu::add(a.data(), into_b.data(), into_b.data(), n);
    test::check_close(into_b, want, 0.0, test::kFloatEps);
  }
}
