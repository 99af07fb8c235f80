// The CUDA dense kernels (linear, linear_transposed, layer_norm, gelu, add, embedding, softmax)
// against their CPU twins, on fresh random inputs and awkward shapes: single rows, widths that are
// not multiples of 32, rows wider than a block, padded row strides, in-place calls. Outputs start
// as NaN (they must be overwritten) and row padding holds a sentinel (it must stay untouched).
// Each tolerance bounds |cuda − cpu| by the sum of both kernels' worst-case float errors; its
// derivation sits with the test (u = 2^-24).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cuda/cuda_ops.h"
#include "test/cuda/cuda_test_util.h"

namespace cpu = eagerlm::cpu;
namespace cuda = eagerlm::cuda;
using namespace eagerlm::cuda_test;

namespace {

constexpr float kSentinel = 12345.0f;

// m rows of stride ld: the [m, n] block NaN, the padding kSentinel.
std::vector<float> poisoned_output(int64_t m, int64_t n, int64_t ld) {
  std::vector<float> y(size_t(m * ld), kSentinel);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) y[size_t(r * ld + c)] = kNaN;
  return y;
}

struct LinearShape {
  int64_t m, k, n, x_pad, y_pad;
};
const LinearShape kLinearShapes[] = {
    {1, 1, 1, 0, 0},       {1, 769, 65, 3, 5}, {3, 17, 1, 0, 2},  {17, 127, 65, 0, 0},
    {65, 769, 2304, 7, 3}, {2, 3, 769, 1, 1},  {127, 1, 3, 2, 0}, {33, 768, 50, 0, 0},
};

// A float dot product of k terms plus one more addend, summed in any order, is within
// (k + 1)·u·(Σ|x·w| + |b|) of the exact value (γ(k+1), first order); the CPU and the GPU each
// obey that, so they differ by at most twice it. One extra u covers the division in γ.
std::vector<double> linear_bound(const std::vector<float>& x, int64_t ldx, const std::vector<float>& w,
                                 bool w_transposed, const std::vector<float>* bias, int64_t m, int64_t k, int64_t n,
                                 int64_t ldy) {
  std::vector<double> bound(size_t(m * ldy), 0.0);  // padding: must be identical
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) {
      double abs_sum = bias ? std::abs(double((*bias)[size_t(c)])) : 0.0;
      for (int64_t i = 0; i < k; ++i) {
        const double wv = w_transposed ? w[size_t(c * k + i)] : w[size_t(i * n + c)];
        abs_sum += std::abs(double(x[size_t(r * ldx + i)]) * wv);
      }
      bound[size_t(r * ldy + c)] = 2.0 * double(k + 2) * kU * abs_sum;
    }
  return bound;
}

}  // namespace

TEST_CASE("cuda linear matches the cpu kernel", "[cuda][linear]") {
  auto ctx = make_context();
  auto rng = test_rng(101);
  for (const LinearShape& s : kLinearShapes) {
    for (const bool with_bias : {false, true}) {
      INFO("m=" << s.m << " k=" << s.k << " n=" << s.n << " bias=" << with_bias);
      const int64_t ldx = s.k + s.x_pad, ldy = s.n + s.y_pad;
      const auto x = random_floats(rng, size_t(s.m * ldx), -1.0f, 1.0f);
      const auto w = random_floats(rng, size_t(s.k * s.n), -1.0f, 1.0f);
      const auto b = random_floats(rng, size_t(s.n), -1.0f, 1.0f);
      const auto y0 = poisoned_output(s.m, s.n, ldy);

      auto y_cpu = y0;
      cpu::linear(x.data(), ldx, w.data(), with_bias ? b.data() : nullptr, y_cpu.data(), ldy, s.m, s.k, s.n);
      DeviceBuffer<float> dx(x), dw(w), db(b), dy(y0);
      cuda::linear(*ctx, dx.get(), ldx, dw.get(), with_bias ? db.get() : nullptr, dy.get(), ldy, s.m, s.k, s.n);
      cuda::synchronize(*ctx);
      check_close(dy.download(), y_cpu, linear_bound(x, ldx, w, false, with_bias ? &b : nullptr, s.m, s.k, s.n, ldy));
    }
  }
}

TEST_CASE("cuda linear_transposed matches the cpu kernel", "[cuda][linear]") {
  auto ctx = make_context();
  auto rng = test_rng(102);
  const LinearShape shapes[] = {
      {1, 64, 50257, 0, 0}, {3, 17, 5, 2, 1}, {4, 768, 1000, 0, 3}, {1, 1, 1, 0, 0}, {70, 33, 129, 1, 0}};
  for (const LinearShape& s : shapes) {
    INFO("m=" << s.m << " k=" << s.k << " n=" << s.n);
    const int64_t ldx = s.k + s.x_pad, ldy = s.n + s.y_pad;
    const auto x = random_floats(rng, size_t(s.m * ldx), -1.0f, 1.0f);
    const auto w = random_floats(rng, size_t(s.n * s.k), -1.0f, 1.0f);
    const auto y0 = poisoned_output(s.m, s.n, ldy);
    auto y_cpu = y0;
    cpu::linear_transposed(x.data(), ldx, w.data(), y_cpu.data(), ldy, s.m, s.k, s.n);
    DeviceBuffer<float> dx(x), dw(w), dy(y0);
    cuda::linear_transposed(*ctx, dx.get(), ldx, dw.get(), dy.get(), ldy, s.m, s.k, s.n);
    cuda::synchronize(*ctx);
    check_close(dy.download(), y_cpu, linear_bound(x, ldx, w, true, nullptr, s.m, s.k, s.n, ldy));
  }
}

// Tensor-core math: cuBLAS rounds each input to TF32 (10 explicit mantissa bits) or BF16 (7)
// before multiplying and accumulates in FP32. Allowing for truncation, an input moves by at most
// e = 2^-10 (TF32) or 2^-7 (BF16) relative, so a product by (2e + e²); the FP32 accumulation on
// both sides is the plain bound above. Together: (2e + e² + 2(k + 2)u)·Σ|x·w| (+ the bias term).
TEST_CASE("cuda linear with TF32 and BF16 tensor-core math stays within input rounding", "[cuda][linear]") {
  auto ctx = make_context();
  auto rng = test_rng(103);
  for (const auto& [math, e] : {std::pair{cuda::GemmMath::kTf32, std::ldexp(1.0, -10)},
                                std::pair{cuda::GemmMath::kBf16, std::ldexp(1.0, -7)}}) {
    cuda::set_gemm_math(*ctx, math);
    for (const LinearShape& s : kLinearShapes) {
      INFO("math=" << int(math) << " m=" << s.m << " k=" << s.k << " n=" << s.n);
      const int64_t ldx = s.k + s.x_pad, ldy = s.n + s.y_pad;
      const auto x = random_floats(rng, size_t(s.m * ldx), -1.0f, 1.0f);
      const auto w = random_floats(rng, size_t(s.k * s.n), -1.0f, 1.0f);
      const auto b = random_floats(rng, size_t(s.n), -1.0f, 1.0f);
      const auto y0 = poisoned_output(s.m, s.n, ldy);
      auto y_cpu = y0;
      cpu::linear(x.data(), ldx, w.data(), b.data(), y_cpu.data(), ldy, s.m, s.k, s.n);
      DeviceBuffer<float> dx(x), dw(w), db(b), dy(y0);
      cuda::linear(*ctx, dx.get(), ldx, dw.get(), db.get(), dy.get(), ldy, s.m, s.k, s.n);
      cuda::synchronize(*ctx);
      // linear_bound is 2(k + 2)u·(Σ|x·w| + |b|); scale it up by the input-rounding share.
      auto bound = linear_bound(x, ldx, w, false, &b, s.m, s.k, s.n, ldy);
      const double plain = 2.0 * double(s.k + 2) * kU;
      for (auto& v : bound) v *= (plain + 2.0 * e + e * e) / plain;
      check_close(dy.download(), y_cpu, bound);
    }
  }
  cuda::set_gemm_math(*ctx, cuda::GemmMath::kFp32);
}

// Tolerance: the mean is a float sum of n terms, off by <= n·u·mean|x| ≈ n·u·(|μ| + σ) per
// kernel, and the variance's sum of squares by <= n·u relative, so the normalized value x̂ moves
// by <= ~2n·u·(1 + |x̂| + |μ|/σ); the affine map adds a few u of |γ·x̂| + |β|. Doubled for two
// kernels and rounded up: 4(n + 4)·u·|γ|·(1 + |x̂| + |μ|/σ) + 4u·(|γ·x̂| + |β|), with μ, σ, x̂
// computed in double.
TEST_CASE("cuda layer_norm matches the cpu kernel", "[cuda][layer_norm]") {
  auto ctx = make_context();
  auto rng = test_rng(103);
  const float eps = 1e-5f;
  const int64_t row_counts[] = {1, 3, 17};
  const int64_t col_counts[] = {1, 31, 768, 1025, 1600};
  for (const int64_t rows : row_counts) {
    for (const int64_t cols : col_counts) {
      for (const bool in_place : {false, true}) {
        INFO("rows=" << rows << " cols=" << cols << " in_place=" << in_place);
        const auto x = random_floats(rng, size_t(rows * cols), -1.0f, 2.0f);
        const auto gamma = random_floats(rng, size_t(cols), 0.5f, 1.5f);
        const auto beta = random_floats(rng, size_t(cols), -0.5f, 0.5f);
        std::vector<float> y_cpu(x.size(), kNaN);
        cpu::layer_norm(x.data(), gamma.data(), beta.data(), y_cpu.data(), rows, cols, eps);

        DeviceBuffer<float> dx(x), dg(gamma), db(beta), dy(std::vector<float>(x.size(), kNaN));
        float* out = in_place ? dx.get() : dy.get();
        cuda::layer_norm(*ctx, dx.get(), dg.get(), db.get(), out, rows, cols, eps);
        cuda::synchronize(*ctx);
        const auto y_gpu = in_place ? dx.download() : dy.download();

        std::vector<double> bound(x.size());
        for (int64_t r = 0; r < rows; ++r) {
          double mean = 0.0, var = 0.0;
          for (int64_t c = 0; c < cols; ++c) mean += x[size_t(r * cols + c)];
          mean /= double(cols);
          for (int64_t c = 0; c < cols; ++c) {
            const double d = x[size_t(r * cols + c)] - mean;
            var += d * d;
          }
          const double sd = std::sqrt(var / double(cols) + double(eps));
          for (int64_t c = 0; c < cols; ++c) {
            const size_t i = size_t(r * cols + c);
            const double xhat = std::abs((x[i] - mean) / sd);
            const double g = std::abs(double(gamma[size_t(c)]));
            bound[i] = 4.0 * double(cols + 4) * kU * g * (1.0 + xhat + std::abs(mean) / sd) +
                       4.0 * kU * (g * xhat + std::abs(double(beta[size_t(c)])));
          }
        }
        check_close(y_gpu, y_cpu, bound);
      }
    }
  }
}

// Tolerance: both compute x / (1 + e^t), t = -2√(2/π)·(x + 0.044715x³). t itself is good to a
// few u relative, i.e. an absolute error <= 4u·|t| that exp turns into a relative one, plus exp's
// own <= 2u (CUDA expf, the CPU's vec_exp); the division adds 2u. Doubled: (8|t| + 16)·u·|y|.
TEST_CASE("cuda gelu matches the cpu kernel", "[cuda][gelu]") {
  auto ctx = make_context();
  auto rng = test_rng(104);
  const int64_t sizes[] = {1, 31, 1000003};
  for (const int64_t n : sizes) {
    for (const bool in_place : {false, true}) {
      INFO("n=" << n << " in_place=" << in_place);
      const auto x = random_floats(rng, size_t(n), -8.0f, 8.0f);
      std::vector<float> y_cpu(x.size(), kNaN);
      cpu::gelu(x.data(), y_cpu.data(), n);
      DeviceBuffer<float> dx(x), dy(std::vector<float>(x.size(), kNaN));
      cuda::gelu(*ctx, dx.get(), in_place ? dx.get() : dy.get(), n);
      cuda::synchronize(*ctx);
      const auto y_gpu = in_place ? dx.download() : dy.download();
      std::vector<double> bound(x.size());
      for (size_t i = 0; i < x.size(); ++i) {
        const double v = x[i];
        const double t = 1.5957691216057308 * (v + 0.044715 * v * v * v);
        bound[i] = (8.0 * std::abs(t) + 16.0) * kU * std::abs(double(y_cpu[i]));
      }
      check_close(y_gpu, y_cpu, bound);
    }
  }
}

// One correctly rounded addition per element: identical to the CPU.
TEST_CASE("cuda add matches the cpu kernel exactly", "[cuda][add]") {
  auto ctx = make_context();
  auto rng = test_rng(105);
  const int64_t sizes[] = {1, 33, (int64_t(1) << 20) + 7};
  for (const int64_t n : sizes) {
    for (const int alias : {0, 1, 2}) {  // y separate, y == a, y == b
      INFO("n=" << n << " alias=" << alias);
      const auto a = random_floats(rng, size_t(n), -10.0f, 10.0f);
      const auto b = random_floats(rng, size_t(n), -10.0f, 10.0f);
      std::vector<float> y_cpu(a.size(), kNaN);
      cpu::add(a.data(), b.data(), y_cpu.data(), n);
      DeviceBuffer<float> da(a), db(b), dy(std::vector<float>(a.size(), kNaN));
      float* out = alias == 1 ? da.get() : (alias == 2 ? db.get() : dy.get());
      cuda::add(*ctx, da.get(), db.get(), out, n);
      cuda::synchronize(*ctx);
      check_identical(alias == 1 ? da.download() : (alias == 2 ? db.download() : dy.download()), y_cpu);
    }
  }
}

// One addition of two table entries per element: identical to the CPU.
TEST_CASE("cuda embedding matches the cpu kernel exactly", "[cuda][embedding]") {
  auto ctx = make_context();
  auto rng = test_rng(106);
  const int64_t vocab = 50, n_positions = 20;
  const int64_t widths[] = {1, 33, 768};
  const int64_t token_counts[] = {1, 7, 300};
  for (const int64_t d : widths) {
    for (const int64_t n_tokens : token_counts) {
      INFO("d_model=" << d << " n_tokens=" << n_tokens);
      const auto wte = random_floats(rng, size_t(vocab * d), -1.0f, 1.0f);
      const auto wpe = random_floats(rng, size_t(n_positions * d), -1.0f, 1.0f);
      std::uniform_int_distribution<int32_t> id_dist(0, int32_t(vocab - 1));
      std::uniform_int_distribution<int32_t> pos_dist(0, int32_t(n_positions - 1));
      std::vector<int32_t> ids(static_cast<size_t>(n_tokens)), positions(static_cast<size_t>(n_tokens));
      for (auto& v : ids) v = id_dist(rng);
      for (auto& v : positions) v = pos_dist(rng);
      ids.back() = int32_t(vocab - 1);  // the table's last rows
      positions.back() = int32_t(n_positions - 1);
      std::vector<float> y_cpu(size_t(n_tokens * d), kNaN);
      cpu::embedding(ids.data(), positions.data(), n_tokens, eagerlm::Weights{eagerlm::WeightType::kF32, wte.data(), nullptr}, wpe.data(), d,
                     y_cpu.data());
      DeviceBuffer<int32_t> dids(ids), dpos(positions);
      DeviceBuffer<float> dwte(wte), dwpe(wpe), dy(std::vector<float>(y_cpu.size(), kNaN));
      cuda::embedding(*ctx, dids.get(), dpos.get(), n_tokens, eagerlm::Weights{eagerlm::WeightType::kF32, dwte.get(), nullptr}, dwpe.get(), d,
                      dy.get());
      cuda::synchronize(*ctx);
      check_identical(dy.download(), y_cpu);
    }
  }
}

// Tolerance: x − max is computed identically by both; the exps differ by <= 2u each, the two sums
// of n positive terms by <= (n − 1)·u relative each, the reciprocal and the product by u each:
// (2n + 16)·u·|p|. Masked entries must be exactly 0 in both (bound 0).
TEST_CASE("cuda softmax matches the cpu kernel, masked entries exactly 0", "[cuda][softmax]") {
  auto ctx = make_context();
  auto rng = test_rng(107);
  struct Shape {
    int64_t rows, cols;
  };
  const Shape shapes[] = {{1, 1}, {3, 33}, {6, 1025}, {2, 50257}, {40, 64}};
  for (const Shape& s : shapes) {
    for (const bool masked : {false, true}) {
      INFO("rows=" << s.rows << " cols=" << s.cols << " masked=" << masked);
      const auto x = random_floats(rng, size_t(s.rows * s.cols), -10.0f, 10.0f);
      // Valid counts: random, plus the edge cases 0, cols, 1, out of range both ways (clamped).
      std::uniform_int_distribution<int32_t> dist(0, int32_t(s.cols));
      std::vector<int32_t> valid(size_t(s.rows));
      for (auto& v : valid) v = dist(rng);
      const int32_t edges[] = {0, int32_t(s.cols), 1, int32_t(s.cols) + 5, -3};
      for (size_t i = 0; i < valid.size() && i < 5; ++i) valid[i] = edges[i];

      auto y_cpu = x;
      cpu::softmax(y_cpu.data(), s.rows, s.cols, masked ? valid.data() : nullptr);
      DeviceBuffer<float> dx(x);
      DeviceBuffer<int32_t> dvalid(valid);
      cuda::softmax(*ctx, dx.get(), s.rows, s.cols, masked ? dvalid.get() : nullptr);
      cuda::synchronize(*ctx);
      const auto y_gpu = dx.download();

      std::vector<double> bound(x.size(), 0.0);
      for (int64_t r = 0; r < s.rows; ++r) {
        const int64_t n_valid = masked ? std::clamp<int64_t>(valid[size_t(r)], 0, s.cols) : s.cols;
        double row_sum = 0.0;
        for (int64_t c = 0; c < s.cols; ++c) {
          const size_t i = size_t(r * s.cols + c);
          if (c < n_valid) {
            bound[i] = double(2 * n_valid + 16) * kU * std::abs(double(y_cpu[i]));
            row_sum += y_gpu[i];
          } else {
            REQUIRE(y_gpu[i] == 0.0f);  // the mask, checked on its own
          }
        }
        if (n_valid > 0) REQUIRE(std::abs(row_sum - 1.0) <= double(n_valid + 8) * kU * 2);
      }
      check_close(y_gpu, y_cpu, bound);
    }
  }
}
