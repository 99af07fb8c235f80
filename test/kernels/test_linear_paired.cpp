// linear_paired: bf16 W held in paired panels (kernels/common/weights.h) against the double
// reference on the exact weights, under both maths: within the bound of GemmMath::kBf16's
// products (test_linear_typed.cpp derives it; typed_weights.h's bf16_math_bound), and within
// float32's (k + 2)·u·Σ|x·w| otherwise; its batch invariance; and the same bits as linear_typed
// over the same W held input-major: always under float32 math, and under kBf16 where the variant
// has AVX512_BF16 (its bf16 GEMM): the one chain per element that both promise.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/cpu/cpu_ops.h"
#include "test/kernels/strided_output.h"
#include "test/kernels/typed_weights.h"
#include "test/reference/linear_typed.h"
#include "test/support/random.h"
#include "test/support/tolerance.h"

namespace ref = eagerlm::reference;
namespace test = eagerlm::test;
using eagerlm::GemmMath;
using eagerlm::WeightType;

namespace {

// The type and maths the panels run: bf16 under either math (f16 is held in row panels:
// test_linear_row_panels.cpp).
constexpr std::pair<WeightType, GemmMath> kCombos[] = {{WeightType::kBF16, GemmMath::kBf16},
                                                       {WeightType::kBF16, GemmMath::kFp32}};

}  // namespace

TEST_CASE("linear_paired matches the double reference", "[kernels][linear_paired]") {
  // Rows off the 8-row tiles, one panel and several, a last panel of 1-31 outputs, k from one
  // pair to past a page of pairs; row strides wider than the rows; with and without bias.
  auto rng = test::test_rng(311);
  struct Dims {
    int64_t k, n;
  };
  for (const auto [type, math] : kCombos) {
    for (const Dims d :
         {Dims{2, 32}, Dims{64, 64}, Dims{98, 96}, Dims{800, 160}, Dims{64, 1}, Dims{96, 50}, Dims{130, 77}}) {
      for (const int64_t m : {1, 2, 5, 8, 9, 17, 33, 80}) {
        for (const bool with_bias : {false, true}) {
          const int64_t ldx = d.k + 3, ldy = d.n + 5;
          INFO(eagerlm::weight_type_name(type) << " " << eagerlm::gemm_math_name(math) << " k=" << d.k << " n=" << d.n
                                               << " m=" << m << " bias=" << with_bias);
          const auto w = test::random_typed_matrix(rng, type, d.k, d.n, true);
          const auto panels = test::in_panels(rng, w, d.k, d.n);
          const auto x = test::random_floats(rng, size_t(m * ldx), -1.0f, 1.0f);
          const auto bias = test::random_floats(rng, size_t(d.n), -1.0f, 1.0f);
          const float* b = with_bias ? bias.data() : nullptr;
          auto y = test::make_strided_output(m, d.n, ldy);
          eagerlm::cpu::linear_paired(x.data(), ldx, panels.view(), b, y.data(), ldy, m, d.k, d.n, math);
          const auto want = ref::linear_typed(x.data(), ldx, w.values, b, m, d.k, d.n);
          const auto abs_sum = ref::linear_typed(x.data(), ldx, w.values, b, m, d.k, d.n, true);
          std::vector<double> bound = test::bf16_math_bound(abs_sum, d.k);
          if (math == GemmMath::kFp32) {
            for (size_t i = 0; i < bound.size(); ++i)
              bound[i] = test::kFirstOrderMargin * double(d.k + 2) * test::kFloatEps * abs_sum[i];
          }
          test::check_within(test::dense_block(y, m, d.n, ldy), want, bound);
        }
      }
    }
  }
}

TEST_CASE("linear_paired is batch-invariant and computes linear_typed's chain", "[kernels][linear_paired]") {
  // Every element is one chain (linear_paired.cpp): a row alone gives the bits it gives among
  // others; under float32 math linear_typed over the same W held input-major computes that chain
  // at any m, and under kBf16 with AVX512_BF16 so does the vector engine of its bf16 GEMM (W
  // packed per call, past the few-row kernels: m > 32).
  eagerlm::cpu::ScopedAmx use(false);
  std::printf("linear_paired in variant %s: kBf16 on %s\n", eagerlm::cpu::active_isa(),
              eagerlm::cpu::has_bf16_gemm() ? "vdpbf16ps tiles, checked against the bf16 GEMM"
                                            : "float32 products (no bf16 GEMM to compare with)");
  auto rng = test::test_rng(312);
  for (const auto [type, math] : kCombos) {
    for (const int64_t k : {64, 770, 3072}) {
      for (const int64_t m : {1, 8, 33, 80}) {
        const int64_t n = m == 33 ? 224 : 211;
        INFO(eagerlm::weight_type_name(type) << " " << eagerlm::gemm_math_name(math) << " k=" << k << " m=" << m);
        const auto w = test::random_typed_matrix(rng, type, k, n, true);
        const auto panels = test::in_panels(rng, w, k, n);
        const auto x = test::random_floats(rng, size_t(m * k), -1.0f, 1.0f);
        const auto bias = test::random_floats(rng, size_t(n), -1.0f, 1.0f);
        auto run = [&](const float* rows, int64_t count, float* y) {
          eagerlm::cpu::linear_paired(rows, k, panels.view(), bias.data(), y, n, count, k, n, math);
        };
        std::vector<float> all(size_t(m * n));
        run(x.data(), m, all.data());
        test::check_each_row_alone(x, all, m, k, n, run);
        if (math == GemmMath::kBf16 && (!eagerlm::cpu::has_bf16_gemm() || m <= 32)) continue;
        std::vector<float> typed(size_t(m * n));
        eagerlm::cpu::linear_typed(x.data(), k, w.view(), bias.data(), typed.data(), n, m, k, n, math);
        CHECK(std::memcmp(typed.data(), all.data(), all.size() * sizeof(float)) == 0);
      }
    }
  }
}
