// linear_typed, linear_transposed_typed and gather_rows_typed against double references computed
// from the exact weights (test/kernels/typed_weights.h: bf16/f16 widened exactly, int8 as
// scale·q in double), for every weight type and every row regime and its edges: m = 1 (decode
// GEMV), a few rows (register tiles: up to 32 for linear_typed, 16 for the transposed), more
// (prefill panels + sgemm); odd k (int8: whole blocks), n not a multiple of 16, row strides wider
// than the rows, bias or none.
//
// Tolerance, GemmMath::kFp32 (and kTf32, float32 on the CPU): each y element is a float sum of
// k products plus the bias in some order, within γ(k+1)·(Σ|x·w| + |b|) of exact, γ(n) ≈ n·u,
// u = 2^-24, plus u·Σ|x·w| for the rounded products (fused or not) — (k+2)·u·(Σ|x·w| + |b|) as in
// test_linear.cpp. int8 widens a weight as fl(scale·q), one more rounding: (k+3)·u·(...). The Σ
// is the reference run on magnitudes.
//
// GemmMath::kBf16 (bf16 weights, prefill, avx512bf16 variant): x is rounded to bf16 first,
// |x̃ - x| <= 2^-8·|x| (8 significant bits, nearest even), and the sums run on x̃:
// |y - exact| <= 2^-8·Σ|x·w| + (k+2)·u·(1 + 2^-8)·(Σ|x·w| + |b|) + (2k + 1)·2^-126, the last
// term for the denormals the instructions flush to zero (inputs and results, each at most
// 2^-126·|w| with |w| <= 1 here). Taken as 2^-8·A + (k+3)·u·A + (2k+1)·2^-126 with A = Σ|x·w| + |b|.
// Elsewhere kBf16 is float32 and meets the tighter bound, which the first one contains.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
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

constexpr WeightType kTypes[] = {WeightType::kF32, WeightType::kBF16, WeightType::kF16, WeightType::kInt8};
constexpr int64_t kRows[] = {1, 2, 3, 4, 5, 6, 7, 8, 16, 17, 31, 32, 33, 64, 200};

struct Shape {
  int64_t k, n, x_pad, y_pad;
  bool large;  // run only a few m (the double reference is slow)
};

// k is for int8 (whole blocks); the other types take k + 1 (odd: a partial vector along k).
const Shape kShapes[] = {{32, 1, 1, 0, false}, {64, 77, 3, 5, false}, {96, 33, 0, 2, false}, {512, 1030, 1, 3, true}};

int64_t k_for(WeightType t, const Shape& s) { return t == WeightType::kInt8 ? s.k : s.k + 1; }

std::vector<double> fp32_bound(const std::vector<double>& abs_sum, int64_t k, WeightType t) {
  const double terms = double(k + 2 + (t == WeightType::kInt8 ? 1 : 0));
  std::vector<double> bound(abs_sum.size());
  for (size_t i = 0; i < bound.size(); ++i) bound[i] = test::kFirstOrderMargin * terms * test::kFloatEps * abs_sum[i];
  return bound;
}

bool exceeds_somewhere(const std::vector<float>& got, const std::vector<double>& want,
                       const std::vector<double>& bound) {
  for (size_t i = 0; i < got.size(); ++i)
    if (std::abs(double(got[i]) - want[i]) > bound[i]) return true;
  return false;
}

// Runs linear_typed (or linear_transposed_typed) for one case and checks it; returns the dense y.
struct Case {
  WeightType type;
  int64_t m, k, n, ldx, ldy;
  bool with_bias, transposed;
  GemmMath math;
};

void check_case(std::mt19937& rng, const Case& c, bool bf16_bound) {
  INFO(eagerlm::weight_type_name(c.type) << (c.transposed ? " transposed" : "") << " m=" << c.m << " k=" << c.k
                                         << " n=" << c.n << " ldx=" << c.ldx << " ldy=" << c.ldy
                                         << " bias=" << c.with_bias << " math=" << eagerlm::gemm_math_name(c.math));
  const auto w = test::random_typed_matrix(rng, c.type, c.k, c.n, !c.transposed);
  const auto x = test::random_floats(rng, size_t(c.m * c.ldx), -1.0f, 1.0f);
  const auto bias = test::random_floats(rng, size_t(c.n), -1.0f, 1.0f);
  const float* b = c.with_bias ? bias.data() : nullptr;
  auto y = test::make_strided_output(c.m, c.n, c.ldy);
  std::vector<double> want, abs_sum;
  if (c.transposed) {
    eagerlm::cpu::linear_transposed_typed(x.data(), c.ldx, w.view(), y.data(), c.ldy, c.m, c.k, c.n, c.math);
    want = ref::linear_transposed_typed(x.data(), c.ldx, w.values, c.m, c.k, c.n);
    abs_sum = ref::linear_transposed_typed(x.data(), c.ldx, w.values, c.m, c.k, c.n, true);
  } else {
    eagerlm::cpu::linear_typed(x.data(), c.ldx, w.view(), b, y.data(), c.ldy, c.m, c.k, c.n, c.math);
    want = ref::linear_typed(x.data(), c.ldx, w.values, b, c.m, c.k, c.n);
    abs_sum = ref::linear_typed(x.data(), c.ldx, w.values, b, c.m, c.k, c.n, true);
  }
  const std::vector<float> got = test::dense_block(y, c.m, c.n, c.ldy);
  if (!bf16_bound) {
    test::check_within(got, want, fp32_bound(abs_sum, c.k, c.type));
    return;
  }
  test::check_within(got, want, test::bf16_math_bound(abs_sum, c.k));
  // Where the variant has the bf16 dot products, the prefill of bf16 weights must use them, and so
  // must any product over output-major W with k a multiple of 32 (read in place from 1 row): its
  // error then exceeds the float32 bound somewhere (x rounded to 8 bits, k >= 33 random terms).
  // Not for long sums: the rounding errors of x cancel as a random walk, ~2^-9·√k of a term, while
  // the float32 bound grows as k²·2^-24 of one: past k ≈ 2^10 the bound holds them.
  const bool in_place = c.transposed && c.k % 32 == 0;
  if (eagerlm::cpu::has_bf16_gemm() && c.type == WeightType::kBF16 && (c.m > 32 || in_place) && c.k < 1024)
    CHECK(exceeds_somewhere(got, want, fp32_bound(abs_sum, c.k, c.type)));
}

void check_all(bool transposed, uint32_t salt) {
  auto rng = test::test_rng(salt);
  for (const WeightType type : kTypes) {
    for (const Shape& s : kShapes) {
      const int64_t k = k_for(type, s);
      for (const int64_t m : kRows) {
        if (s.large && m != 1 && m != 8 && m != 33) continue;
        for (const bool with_bias : {false, true}) {
          if (transposed && with_bias) continue;
          check_case(rng, {type, m, k, s.n, k + s.x_pad, s.n + s.y_pad, with_bias, transposed, GemmMath::kFp32}, false);
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("linear_typed matches the double reference", "[kernels][linear_typed]") { check_all(false, 301); }

TEST_CASE("linear_transposed_typed matches the double reference", "[kernels][linear_typed]") { check_all(true, 302); }

TEST_CASE("typed products under kBf16 and kTf32 math", "[kernels][linear_typed]") {
  auto rng = test::test_rng(303);
  for (const WeightType type : kTypes) {
    for (const bool transposed : {false, true}) {
      for (const int64_t m : {1, 8, 33, 64, 200}) {
        const int64_t k = type == WeightType::kInt8 ? 96 : 97, n = 83;
        const bool bias = !transposed;
        check_case(rng, {type, m, k, n, k + 2, n + 1, bias, transposed, GemmMath::kBf16}, true);
        check_case(rng, {type, m, k, n, k + 2, n + 1, bias, transposed, GemmMath::kTf32}, false);
      }
    }
  }
}

TEST_CASE("the bf16 GEMM's engines: AMX tiles and AVX512_BF16 dot products", "[kernels][linear_typed]") {
  // Each engine this CPU has, forced in turn; shapes past one packed block of pairs (k > 256)
  // and one panel of columns (n > 192), rows and columns off the 16-row tiles and the 8-row
  // register tiles, odd k; for the in-place reading of an output-major W (k a multiple of 32: the
  // tiles at 1-16 rows, blocks of 4, 3 and 1 W tiles and a tail of W rows past the last 16; the
  // dot products at 1-32 rows, in groups of up to 8 rows, fewer where k is large) the edges of
  // both ranges.
  // A variant without a bf16 GEMM runs the same cases on its fp32 kernels (within the bf16 bound).
  std::vector<bool> engines = {false};
  if (eagerlm::cpu::has_bf16_gemm() && eagerlm::cpu::amx_available()) engines.insert(engines.begin(), true);
  auto rng = test::test_rng(305);
  for (const bool amx : engines) {
    eagerlm::cpu::ScopedAmx use(amx);
    std::printf("bf16 GEMM engine: %s (variant %s)\n",
                !eagerlm::cpu::has_bf16_gemm() ? "none, fp32 kernels"
                : amx                          ? "AMX tiles"
                                               : "vector dot products",
                eagerlm::cpu::active_isa());
    INFO("engine " << (amx ? "amx" : "vector"));
    for (const bool transposed : {false, true}) {
      for (const int64_t m : {1, 2, 5, 9, 16, 17, 32, 33, 47, 80}) {
        for (const int64_t k : {64, 96, 601, 3104}) {
          if (k == 3104 && m > 33) continue;  // in place, x past L1: groups of fewer rows
          const int64_t n = k == 64 ? 17 : k == 96 ? 248 : k == 601 ? 401 : 29;
          check_case(rng, {WeightType::kBF16, m, k, n, k + 3, n + 2, !transposed, transposed, GemmMath::kBf16}, true);
        }
      }
    }
  }
}

TEST_CASE("the vector bf16 engine reads output-major W in place batch-invariantly", "[kernels][linear_typed]") {
  // Each row's products in place are one fixed chain (bf16_gemm.cpp, dot_tile): a row gives the
  // same bits alone as among 1-32 rows, whatever group of rows it falls in.
  if (!eagerlm::cpu::has_bf16_gemm()) {
    std::printf("no bf16 GEMM in variant %s: nothing to check\n", eagerlm::cpu::active_isa());
    return;
  }
  eagerlm::cpu::ScopedAmx use(false);
  auto rng = test::test_rng(306);
  for (const int64_t k : {64, 800, 3104}) {
    for (const int64_t m : {2, 9, 32}) {
      INFO("k=" << k << " m=" << m);
      const int64_t n = 37;
      const auto w = test::random_typed_matrix(rng, WeightType::kBF16, k, n, false);
      const auto x = test::random_floats(rng, size_t(m * k), -1.0f, 1.0f);
      std::vector<float> all(size_t(m * n)), alone(static_cast<size_t>(n));
      eagerlm::cpu::linear_transposed_typed(x.data(), k, w.view(), all.data(), n, m, k, n, GemmMath::kBf16);
      for (int64_t r = 0; r < m; ++r) {
        eagerlm::cpu::linear_transposed_typed(x.data() + r * k, k, w.view(), alone.data(), n, 1, k, n, GemmMath::kBf16);
        CHECK(std::memcmp(alone.data(), all.data() + r * n, size_t(n) * sizeof(float)) == 0);
      }
    }
  }
}

TEST_CASE("linear_typed with k == 0 leaves the bias", "[kernels][linear_typed]") {
  const std::vector<float> bias = {1.5f, -2.0f, 0.25f};
  const float x = 0.0f;
  const uint16_t w = 0;
  for (const WeightType type : kTypes) {
    for (const int64_t m : {1, 4, 40}) {
      const eagerlm::Weights weights{type, &w, nullptr};
      auto y = test::make_strided_output(m, 3, 3);
      eagerlm::cpu::linear_typed(&x, 1, weights, bias.data(), y.data(), 3, m, 0, 3, GemmMath::kFp32);
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t c = 0; c < 3; ++c) CHECK(y[size_t(r * 3 + c)] == bias[size_t(c)]);
      }
      eagerlm::cpu::linear_transposed_typed(&x, 1, weights, y.data(), 3, m, 0, 3, GemmMath::kFp32);
      for (float v : y) CHECK(v == 0.0f);
    }
  }
}

TEST_CASE("gather_rows_typed widens rows exactly", "[kernels][linear_typed]") {
  // bf16/f16 widen exactly; int8 rounds scale·q once, as float multiplication does.
  auto rng = test::test_rng(304);
  for (const WeightType type : kTypes) {
    for (const int64_t k : {32, 96, 768}) {
      const int64_t kk = type == WeightType::kInt8 ? k : k + 3, vocab = 301;
      INFO(eagerlm::weight_type_name(type) << " k=" << kk);
      const auto w = test::random_typed_matrix(rng, type, kk, vocab, false);
      for (const int64_t n_rows : {1, 7, 200}) {
        std::uniform_int_distribution<int32_t> pick(0, int32_t(vocab - 1));
        std::vector<int32_t> rows(static_cast<size_t>(n_rows));
        for (auto& r : rows) r = pick(rng);
        rows[0] = int32_t(vocab - 1);
        std::vector<float> out(size_t(n_rows * kk), std::nanf("")), want(out.size());
        eagerlm::cpu::gather_rows_typed(w.view(), kk, rows.data(), n_rows, out.data());
        for (int64_t r = 0; r < n_rows; ++r) {
          for (int64_t i = 0; i < kk; ++i) {
            const size_t e = size_t(rows[size_t(r)] * kk + i);
            want[size_t(r * kk + i)] = type == WeightType::kInt8
                                           ? w.scales[size_t(e / eagerlm::kInt8Block)] * float(w.q[e])
                                           : float(w.values[e]);
          }
        }
        test::check_identical(out, want);
      }
    }
  }
}
