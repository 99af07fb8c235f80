// linear_row_panels: float32 and f16 W held in row panels (kernels/common/weights.h) against the
// double reference on the exact weights, within float32's (k + 2)·u·(Σ|x·w| + |b|)
// (test_linear_typed.cpp derives it); its batch invariance; and the same bits as linear_typed over
// the same W held input-major, the one chain per element that both promise
// (linear_row_panels.cpp), from memory and, past kWidenPastRows (8) rows, over f16 widened once.
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

TEST_CASE("linear_row_panels matches the double reference", "[kernels][linear_row_panels]") {
  // Rows off the register tiles (8 with AVX-512, 3 with AVX2, 1 generic) and past them, one panel
  // and several, a last panel of 1-31 outputs, odd k and k past one pass over the inputs
  // (row_tiles.h: 768 inputs at 8 rows), row strides wider than the rows, with and without bias.
  auto rng = test::test_rng(331);
  struct Dims {
    int64_t k, n;
  };
  for (const WeightType type : {WeightType::kF32, WeightType::kF16}) {
    for (const Dims d : {Dims{1, 32}, Dims{7, 64}, Dims{96, 96}, Dims{800, 160}, Dims{2000, 45}, Dims{64, 1},
                         Dims{33, 50}, Dims{128, 77}}) {
      for (const int64_t m : {1, 2, 3, 5, 8, 9, 17, 33}) {
        for (const bool with_bias : {false, true}) {
          const int64_t ldx = d.k + 3, ldy = d.n + 5;
          INFO(eagerlm::weight_type_name(type) << " k=" << d.k << " n=" << d.n << " m=" << m << " bias=" << with_bias);
          const auto w = test::random_typed_matrix(rng, type, d.k, d.n, true);
          const auto panels = test::in_panels(rng, w, d.k, d.n);
          const auto x = test::random_floats(rng, size_t(m * ldx), -1.0f, 1.0f);
          const auto bias = test::random_floats(rng, size_t(d.n), -1.0f, 1.0f);
          const float* b = with_bias ? bias.data() : nullptr;
          auto y = test::make_strided_output(m, d.n, ldy);
          eagerlm::cpu::linear_row_panels(x.data(), ldx, panels.view(), b, y.data(), ldy, m, d.k, d.n);
          const auto want = ref::linear_typed(x.data(), ldx, w.values, b, m, d.k, d.n);
          const auto abs_sum = ref::linear_typed(x.data(), ldx, w.values, b, m, d.k, d.n, true);
          std::vector<double> bound(abs_sum.size());
          for (size_t i = 0; i < bound.size(); ++i)
            bound[i] = test::kFirstOrderMargin * double(d.k + 2) * test::kFloatEps * abs_sum[i];
          test::check_within(test::dense_block(y, m, d.n, ldy), want, bound);
        }
      }
    }
  }
}

TEST_CASE("linear_row_panels is batch-invariant and computes linear_typed's chain", "[kernels][linear_row_panels]") {
  // A row alone gives the bits it gives among others, and linear_typed over the same W held
  // input-major computes the same chain at any m (its GEMV, register tiles and prefill panels).
  std::printf("linear_row_panels in variant %s\n", eagerlm::cpu::active_isa());
  auto rng = test::test_rng(332);
  for (const WeightType type : {WeightType::kF32, WeightType::kF16}) {
    for (const int64_t k : {64, 768, 3072}) {
      for (const int64_t m : {1, 3, 8, 33, 80}) {
        const int64_t n = m == 33 ? 224 : 211;
        INFO(eagerlm::weight_type_name(type) << " k=" << k << " m=" << m);
        const auto w = test::random_typed_matrix(rng, type, k, n, true);
        const auto panels = test::in_panels(rng, w, k, n);
        const auto x = test::random_floats(rng, size_t(m * k), -1.0f, 1.0f);
        const auto bias = test::random_floats(rng, size_t(n), -1.0f, 1.0f);
        auto run = [&](const float* rows, int64_t count, float* y) {
          eagerlm::cpu::linear_row_panels(rows, k, panels.view(), bias.data(), y, n, count, k, n);
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
}
