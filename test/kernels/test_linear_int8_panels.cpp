// linear_int8_panels: int8 W held in panels (kernels/common/weights.h) against the double
// reference on the exact weights (scale·q), within float32's (k + 3)·u·Σ|x·w| (test_linear_typed.cpp
// derives it: int8 widens a weight as fl(scale·q), one more rounding than the other types); its
// batch invariance; and the same bits as linear_typed over the same W held input-major, the one
// chain per element that both promise (linear_int8_panels.cpp).
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/cpu/cpu_ops.h"
#include "test/kernels/strided_output.h"
#include "test/kernels/typed_weights.h"
#include "test/reference/linear_typed.h"
#include "test/support/random.h"
#include "test/support/tolerance.h"

namespace ref = eagerlm::reference;
namespace test = eagerlm::test;
using eagerlm::WeightType;

TEST_CASE("linear_int8_panels matches the double reference", "[kernels][linear_int8_panels]") {
  // Rows off the register tiles (8 with AVX-512, 2 with AVX2, 1 generic) and past them (each panel
  // widened once), one panel and several, a last panel of 1-31 outputs, k from one block to past
  // a page of blocks; row strides wider than the rows; with and without bias.
  auto rng = test::test_rng(321);
  struct Dims {
    int64_t k, n;
  };
  for (const Dims d :
       {Dims{32, 32}, Dims{64, 64}, Dims{96, 96}, Dims{800, 160}, Dims{64, 1}, Dims{96, 50}, Dims{128, 77}}) {
    for (const int64_t m : {1, 2, 3, 5, 8, 9, 17, 33, 80}) {
      for (const bool with_bias : {false, true}) {
        const int64_t ldx = d.k + 3, ldy = d.n + 5;
        INFO("k=" << d.k << " n=" << d.n << " m=" << m << " bias=" << with_bias);
        const auto w = test::random_typed_matrix(rng, WeightType::kInt8, d.k, d.n, true);
        const auto panels = test::in_panels(rng, w, d.k, d.n);
        const auto x = test::random_floats(rng, size_t(m * ldx), -1.0f, 1.0f);
        const auto bias = test::random_floats(rng, size_t(d.n), -1.0f, 1.0f);
        const float* b = with_bias ? bias.data() : nullptr;
        auto y = test::make_strided_output(m, d.n, ldy);
        eagerlm::cpu::linear_int8_panels(x.data(), ldx, panels.view(), b, y.data(), ldy, m, d.k, d.n);
        const auto want = ref::linear_typed(x.data(), ldx, w.values, b, m, d.k, d.n);
        const auto abs_sum = ref::linear_typed(x.data(), ldx, w.values, b, m, d.k, d.n, true);
        std::vector<double> bound(abs_sum.size());
        for (size_t i = 0; i < bound.size(); ++i)
          bound[i] = test::kFirstOrderMargin * double(d.k + 3) * test::kFloatEps * abs_sum[i];
        test::check_within(test::dense_block(y, m, d.n, ldy), want, bound);
      }
    }
  }
}

TEST_CASE("linear_int8_panels is batch-invariant and computes linear_typed's chain", "[kernels][linear_int8_panels]") {
  // A row alone gives the bits it gives among others, and linear_typed over the same W held
  // input-major computes the same chain at any m (its GEMV, register tiles and prefill panels).
  std::printf("linear_int8_panels in variant %s\n", eagerlm::cpu::active_isa());
  auto rng = test::test_rng(322);
  for (const int64_t k : {64, 768, 3072}) {
    for (const int64_t m : {1, 3, 8, 33, 80}) {
      const int64_t n = m == 33 ? 224 : 211;
      INFO("k=" << k << " m=" << m);
      const auto w = test::random_typed_matrix(rng, WeightType::kInt8, k, n, true);
      const auto panels = test::in_panels(rng, w, k, n);
      const auto x = test::random_floats(rng, size_t(m * k), -1.0f, 1.0f);
      const auto bias = test::random_floats(rng, size_t(n), -1.0f, 1.0f);
      auto run = [&](const float* rows, int64_t count, float* y) {
        eagerlm::cpu::linear_int8_panels(rows, k, panels.view(), bias.data(), y, n, count, k, n);
      };
      std::vector<float> all(size_t(m * n)), typed(size_t(m * n));
      run(x.data(), m, all.data());
      test::check_each_row_alone(x, all, m, k, n, run);
      eagerlm::cpu::linear_typed(x.data(), k, w.view(), bias.data(), typed.data(), n, m, k, n,
                                 eagerlm::GemmMath::kFp32);
      CHECK(std::memcmp(typed.data(), all.data(), all.size() * sizeof(float)) == 0);
    }
  }
}
