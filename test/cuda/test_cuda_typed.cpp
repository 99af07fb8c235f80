// The CUDA typed-weight kernels (linear_typed, linear_transposed_typed, embedding of a typed wte)
// against the double reference of the exact weights (test/reference/linear_typed.h on
// test/kernels/typed_weights.h: bf16/f16 widened exactly, int8 as scale·q) and against the CPU
// kernels on the same stored weights, for every weight type and both regimes: the fused GEMVs
// (m <= kTypedGemvRows, including the k splits of the input-major one) and the cuBLAS prefill
// (m > kTypedGemvRows) under each GemmMath. Outputs start as NaN, row padding holds a sentinel.
//
// Tolerance, A = Σ|x·w| + |b| (the reference on magnitudes), u = 2^-24:
//   float32 arithmetic (the GEMVs under any math; prefill under kFp32): every output is a float
//   sum of the k products and the bias in some order, each product rounded once and an int8
//   weight's scale applied with one more rounding (per weight in the output-major kernel and the
//   dequantized tiles, per 32-input partial sum in the input-major GEMV; either way one rounding
//   on a share of A): (k + 3)·u·A, as test/kernels/test_linear_typed.cpp derives for the CPU.
//   tensor cores (prefill under kTf32/kBf16): inputs are rounded first and the float32
//   accumulation of the tensor cores is allowed truncation, 2u an operation: bf16/f16 W are used
//   as stored and x is rounded to W's type by our kernel (to nearest: 2^-8 relative for bf16,
//   2^-11 for f16, plus 2^-25 absolute below f16's normal range, so 2^-25·Σ|w| more); f32/int8 W
//   go through float32 tiles whose x and W cuBLAS rounds (allowing truncation, e = 2^-10 for
//   TF32, 2^-7 for BF16: a product moves by 2e + e²). Plus 2(k + 3)·u·A for the sums and
//   (2k + 1)·2^-126 for flushed denormals.
// The CPU and the GPU each meet their bound against the exact value, so they differ by at most
// the sum of the two.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cuda/cuda_ops.h"
#include "test/cuda/cuda_test_util.h"
#include "test/kernels/strided_output.h"
#include "test/kernels/typed_weights.h"
#include "test/reference/linear_typed.h"

namespace cpu = eagerlm::cpu;
namespace cuda = eagerlm::cuda;
namespace ref = eagerlm::reference;
using eagerlm::GemmMath;
using eagerlm::WeightType;
using namespace eagerlm::cuda_test;

namespace {

constexpr WeightType kTypes[] = {WeightType::kF32, WeightType::kBF16, WeightType::kF16, WeightType::kInt8};

// The stored weights of a TypedMatrix on the device.
class DeviceWeights {
 public:
  explicit DeviceWeights(const eagerlm::test::TypedMatrix& w)
      : type_(w.type), f32_(w.f32), halves_(w.halves), q_(w.q), scales_(w.scales) {}
  eagerlm::Weights view() const {
    const void* data = type_ == WeightType::kF32    ? static_cast<const void*>(f32_.get())
                       : type_ == WeightType::kInt8 ? static_cast<const void*>(q_.get())
                                                    : static_cast<const void*>(halves_.get());
    return {type_, data, type_ == WeightType::kInt8 ? scales_.get() : nullptr};
  }

 private:
  WeightType type_;
  DeviceBuffer<float> f32_;
  DeviceBuffer<uint16_t> halves_;
  DeviceBuffer<int8_t> q_;
  DeviceBuffer<float> scales_;
};

struct Case {
  WeightType type;
  int64_t m, k, n, ldx, ldy;
  bool with_bias, transposed;
  GemmMath math;
};

// The per-element bound against the exact value for one kernel run of case c (see the top).
std::vector<double> bound_for(const Case& c, const std::vector<double>& abs_sum, const std::vector<double>& abs_w) {
  const bool tensor_cores = c.m > cuda::kTypedGemvRows && c.math != GemmMath::kFp32;
  std::vector<double> bound(abs_sum.size());
  for (size_t i = 0; i < bound.size(); ++i) {
    const double a = abs_sum[i];
    double b = double(c.k + 3) * kU * a;
    if (tensor_cores) {
      b = 2.0 * double(c.k + 3) * kU * a + double(2 * c.k + 1) * 0x1p-126;
      if (c.type == WeightType::kBF16) {
        b += 0x1p-8 * a;
      } else if (c.type == WeightType::kF16) {
        b += 0x1p-11 * a + 0x1p-25 * abs_w[i % size_t(c.n)];
      } else {
        const double e = c.math == GemmMath::kTf32 ? 0x1p-10 : 0x1p-7;
        b += (2.0 * e + e * e) * a;
      }
    }
    bound[i] = eagerlm::test::kFirstOrderMargin * b;
  }
  return bound;
}

// The CPU's own bound (test/kernels/test_linear_typed.cpp): float32 unless kBf16 math rounds x.
std::vector<double> cpu_bound_for(const Case& c, const std::vector<double>& abs_sum) {
  std::vector<double> bound(abs_sum.size());
  for (size_t i = 0; i < bound.size(); ++i) {
    double b = double(c.k + 3) * kU * abs_sum[i];
    if (c.math == GemmMath::kBf16) b = (0x1p-8 + double(c.k + 3) * kU) * abs_sum[i] + double(2 * c.k + 1) * 0x1p-126;
    bound[i] = eagerlm::test::kFirstOrderMargin * b;
  }
  return bound;
}

void check_case(cuda::CudaContext& ctx, std::mt19937& rng, const Case& c) {
  INFO(eagerlm::weight_type_name(c.type) << (c.transposed ? " transposed" : "") << " m=" << c.m << " k=" << c.k
                                         << " n=" << c.n << " ldx=" << c.ldx << " ldy=" << c.ldy
                                         << " bias=" << c.with_bias << " math=" << eagerlm::gemm_math_name(c.math));
  const auto w = eagerlm::test::random_typed_matrix(rng, c.type, c.k, c.n, !c.transposed);
  const auto x = random_floats(rng, size_t(c.m * c.ldx), -1.0f, 1.0f);
  const auto bias = random_floats(rng, size_t(c.n), -1.0f, 1.0f);
  const float* b = c.with_bias ? bias.data() : nullptr;
  const auto y0 = eagerlm::test::make_strided_output(c.m, c.n, c.ldy);
  const std::vector<float> ones(size_t(c.k), 1.0f);

  auto y_cpu = y0;
  std::vector<double> want, abs_sum, abs_w;
  if (c.transposed) {
    cpu::linear_transposed_typed(x.data(), c.ldx, w.view(), y_cpu.data(), c.ldy, c.m, c.k, c.n, c.math);
    want = ref::linear_transposed_typed(x.data(), c.ldx, w.values, c.m, c.k, c.n);
    abs_sum = ref::linear_transposed_typed(x.data(), c.ldx, w.values, c.m, c.k, c.n, true);
    abs_w = ref::linear_transposed_typed(ones.data(), c.k, w.values, 1, c.k, c.n, true);
  } else {
    cpu::linear_typed(x.data(), c.ldx, w.view(), b, y_cpu.data(), c.ldy, c.m, c.k, c.n, c.math);
    want = ref::linear_typed(x.data(), c.ldx, w.values, b, c.m, c.k, c.n);
    abs_sum = ref::linear_typed(x.data(), c.ldx, w.values, b, c.m, c.k, c.n, true);
    abs_w = ref::linear_typed(ones.data(), c.k, w.values, nullptr, 1, c.k, c.n, true);
  }

  cuda::set_gemm_math(ctx, c.math);
  const DeviceWeights dw(w);
  DeviceBuffer<float> dx(x), dbias(bias), dy(y0);
  if (c.transposed) {
    cuda::linear_transposed_typed(ctx, dx.get(), c.ldx, dw.view(), dy.get(), c.ldy, c.m, c.k, c.n);
  } else {
    cuda::linear_typed(ctx, dx.get(), c.ldx, dw.view(), c.with_bias ? dbias.get() : nullptr, dy.get(), c.ldy, c.m, c.k,
                       c.n);
  }
  cuda::synchronize(ctx);
  cuda::set_gemm_math(ctx, GemmMath::kFp32);

  const std::vector<float> got = eagerlm::test::dense_block(dy.download(), c.m, c.n, c.ldy);
  const std::vector<double> bound = bound_for(c, abs_sum, abs_w);
  {
    INFO("GPU against the exact product");
    eagerlm::test::check_within(got, want, bound);
  }
  {
    INFO("GPU against the CPU kernel on the same weights");
    const std::vector<float> cpu_block = eagerlm::test::dense_block(y_cpu, c.m, c.n, c.ldy);
    std::vector<double> both = cpu_bound_for(c, abs_sum);
    for (size_t i = 0; i < both.size(); ++i) both[i] += bound[i];
    check_close(got, cpu_block, both);
  }
}

// Rows: 1, 2, 3-4 and 5-8 take the GEMV's row tiles of 1, 2, 4 and 8; 9 and 32 several tiles;
// 33 and 70 the cuBLAS prefill.
constexpr int64_t kRows[] = {1, 2, 3, 4, 5, 8, 9, 32, 33, 70};

struct Shape {
  int64_t k, n, x_pad, y_pad;
  bool large;  // only m = 1, 8, 33 (the double reference is slow)
};

// k is for int8 (whole blocks); the other types take k + 1 (a partial 32-input block). With few
// column blocks the input-major GEMV splits k over the SMs (k = 768, n = 130: 3 splits; k = 3072,
// n = 1500: 11); prefill dequantizes W in tiles of 2^22 floats, so k = 3072, n = 1500 takes two
// tiles of columns and the output-major k = 768, n = 12011 three tiles of rows.
const Shape kLinearShapes[] = {{32, 1, 0, 0, false},
                               {64, 77, 3, 5, false},
                               {768, 130, 1, 2, false},
                               {768, 2304, 0, 0, true},
                               {3072, 1500, 2, 0, true}};
const Shape kTransposedShapes[] = {{32, 1, 0, 0, false}, {64, 1000, 1, 3, false}, {768, 12011, 0, 1, true}};

int64_t k_for(WeightType t, const Shape& s) { return t == WeightType::kInt8 ? s.k : s.k + 1; }

void check_all(bool transposed, uint32_t salt) {
  auto ctx = make_context();
  auto rng = test_rng(salt);
  for (const WeightType type : kTypes) {
    for (const Shape& s : transposed ? std::vector<Shape>(std::begin(kTransposedShapes), std::end(kTransposedShapes))
                                     : std::vector<Shape>(std::begin(kLinearShapes), std::end(kLinearShapes))) {
      const int64_t k = k_for(type, s);
      for (const int64_t m : kRows) {
        if (s.large && m != 1 && m != 8 && m != 33) continue;
        for (const bool with_bias : {false, true}) {
          if (transposed && with_bias) continue;
          check_case(*ctx, rng, {type, m, k, s.n, k + s.x_pad, s.n + s.y_pad, with_bias, transposed, GemmMath::kFp32});
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("cuda linear_typed matches the exact product and the cpu kernel", "[cuda][linear_typed]") {
  check_all(false, 401);
}

TEST_CASE("cuda linear_transposed_typed matches the exact product and the cpu kernel", "[cuda][linear_typed]") {
  check_all(true, 402);
}

TEST_CASE("cuda typed products under TF32 and BF16 tensor-core math stay within input rounding",
          "[cuda][linear_typed]") {
  auto ctx = make_context();
  auto rng = test_rng(403);
  for (const WeightType type : kTypes) {
    for (const bool transposed : {false, true}) {
      for (const GemmMath math : {GemmMath::kTf32, GemmMath::kBf16}) {
        for (const int64_t m : {1, 32, 33, 70}) {  // the GEMV ignores the math; prefill uses it
          const int64_t k = type == WeightType::kInt8 ? 768 : 769, n = 83;
          check_case(*ctx, rng, {type, m, k, n, k + 2, n + 1, !transposed, transposed, math});
        }
      }
    }
  }
}

// A typed wte widens exactly (int8: fl(s·q), as the CPU rounds it), then one float addition: the
// GPU's rows equal the CPU's bit for bit.
TEST_CASE("cuda embedding of a typed wte equals the cpu kernel", "[cuda][linear_typed]") {
  auto ctx = make_context();
  auto rng = test_rng(404);
  const int64_t vocab = 301, n_positions = 20;
  for (const WeightType type : kTypes) {
    for (const int64_t d : {32, 96, 768}) {
      const int64_t dd = type == WeightType::kInt8 ? d : d + 3;
      for (const int64_t n_tokens : {1, 7, 300}) {
        INFO(eagerlm::weight_type_name(type) << " d_model=" << dd << " n_tokens=" << n_tokens);
        const auto wte = eagerlm::test::random_typed_matrix(rng, type, dd, vocab, false);
        const auto wpe = random_floats(rng, size_t(n_positions * dd), -1.0f, 1.0f);
        std::uniform_int_distribution<int32_t> id_dist(0, int32_t(vocab - 1));
        std::uniform_int_distribution<int32_t> pos_dist(0, int32_t(n_positions - 1));
        std::vector<int32_t> ids(static_cast<size_t>(n_tokens)), positions(static_cast<size_t>(n_tokens));
        for (auto& v : ids) v = id_dist(rng);
        for (auto& v : positions) v = pos_dist(rng);
        ids.back() = int32_t(vocab - 1);
        positions.back() = int32_t(n_positions - 1);
        std::vector<float> y_cpu(size_t(n_tokens * dd), kNaN);
        cpu::embedding(ids.data(), positions.data(), n_tokens, wte.view(), wpe.data(), dd, y_cpu.data());
        const DeviceWeights dwte(wte);
        DeviceBuffer<int32_t> dids(ids), dpos(positions);
        DeviceBuffer<float> dwpe(wpe), dy(std::vector<float>(y_cpu.size(), kNaN));
        cuda::embedding(*ctx, dids.get(), dpos.get(), n_tokens, dwte.view(), dwpe.get(), dd, dy.get());
        cuda::synchronize(*ctx);
        check_identical(dy.download(), y_cpu);
      }
    }
  }
}
