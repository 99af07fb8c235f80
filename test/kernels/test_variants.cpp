// The CPU kernel variants against each other: every variant this CPU runs (generic, the portable
// one, included) against the fastest. Exact kernels (copies, conversions, embedding, cache
// appends, additions, the initializer's fills) must agree bit for bit; the others may sum in
// another order, so linear, the attention and a whole model's logits must agree within a bound
// twice a float32 sum's error; so must the typed-weight products, while the quantizer and row
// gathers are exact. (Each variant is also tested against the double references: the
// other kernel tests run once per variant, see test/CMakeLists.txt.)
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/cpu_ops.h"
#include "models/gpt2/forward.h"
#include "models/gpt2/model.h"
#include "test/kernels/typed_weights.h"
#include "test/models/test_models_util.h"
#include "test/support/random.h"
#include "test/support/tolerance.h"

using namespace eagerlm;

namespace {

// Runs f() under every supported variant; returns the outputs, the fastest (first) variant's first.
template <typename F>
auto under_each_variant(F f) {
  std::vector<decltype(f())> out;
  for (const std::string& isa : cpu::supported_isas()) {
    cpu::ScopedIsa use(isa);
    out.push_back(f());
  }
  return out;
}

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

}  // namespace

TEST_CASE("every variant this CPU runs is tested here and the fastest is chosen", "[kernels][variants]") {
  const std::vector<std::string> isas = cpu::supported_isas();
  REQUIRE(!isas.empty());
  INFO("variants: " << isas.size() << ", fastest " << isas.front() << ", active " << cpu::active_isa());
  if (std::getenv("EAGERLM_CPU_ISA") == nullptr) CHECK(isas.front() == cpu::active_isa());
}

TEST_CASE("exact kernels agree bit for bit across variants", "[kernels][variants]") {
  std::mt19937 rng = test::test_rng(71);
  const int64_t n = 10007;
  const std::vector<float> a = test::random_floats(rng, size_t(n), -3, 3),
                           b = test::random_floats(rng, size_t(n), -3, 3);
  const auto sums = under_each_variant([&] {
    std::vector<float> y(static_cast<size_t>(n));
    cpu::add(a.data(), b.data(), y.data(), n);
    return y;
  });
  const auto halves = under_each_variant([&] {
    std::vector<uint16_t> h(static_cast<size_t>(n));
    cpu::convert_from_f32(a.data(), DType::kBF16, h.data(), n);
    std::vector<uint16_t> f(static_cast<size_t>(n));
    cpu::convert_from_f32(a.data(), DType::kF16, f.data(), n);
    h.insert(h.end(), f.begin(), f.end());
    return h;
  });
  const auto fills = under_each_variant([&] {
    std::vector<float> y(static_cast<size_t>(3 * n));
    cpu::fill_normal_f32(rng::key_from_seed(5), 0.02f, y.data(), n, 123);
    std::vector<uint16_t> h(static_cast<size_t>(n));
    cpu::fill_normal(rng::key_from_seed(6), 0.5f, DType::kBF16, h.data(), n, 0);
    for (int64_t i = 0; i < n; ++i) y[size_t(n + i)] = bf16_to_float(h[size_t(i)]);
    cpu::fill_constant(0.25f, DType::kF32, y.data() + 2 * n, n);
    return y;
  });
  for (size_t v = 1; v < sums.size(); ++v) {
    INFO("variant " << cpu::supported_isas()[v]);
    CHECK(same_bits(sums[v], sums[0]));
    CHECK(same_bits(halves[v], halves[0]));
    CHECK(same_bits(fills[v], fills[0]));
  }
}

TEST_CASE("linear agrees across variants within twice a dot product's error", "[kernels][variants]") {
  std::mt19937 rng = test::test_rng(72);
  for (const auto [m, k, n] : {std::tuple{1, 768, 300}, std::tuple{7, 131, 97}, std::tuple{64, 256, 192}}) {
    INFO("m " << m << " k " << k << " n " << n);
    const auto x = test::random_floats(rng, size_t(m * k), -1, 1), w = test::random_floats(rng, size_t(k * n), -1, 1);
    const auto bias = test::random_floats(rng, size_t(n), -1, 1);
    const auto ys = under_each_variant([&] {
      std::vector<float> y(static_cast<size_t>(m * n));
      cpu::linear(x.data(), k, w.data(), bias.data(), y.data(), n, m, k, n);
      return y;
    });
    // Each variant: |y - exact| <= (k + 1)·u·(|b| + Σ|x·w|) to first order; two variants differ by
    // at most twice that.
    std::vector<double> bound(size_t(m * n));
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        double mag = std::abs(bias[size_t(c)]);
        for (int64_t i = 0; i < k; ++i) mag += std::abs(double(x[size_t(r * k + i)]) * w[size_t(i * n + c)]);
        bound[size_t(r * n + c)] = 2 * test::kFirstOrderMargin * double(k + 1) * test::kFloatEps * mag;
      }
    const std::vector<double> fastest(ys[0].begin(), ys[0].end());
    for (size_t v = 1; v < ys.size(); ++v) {
      INFO("variant " << cpu::supported_isas()[v]);
      test::check_within(ys[v], fastest, bound);
    }
  }
}

TEST_CASE("typed-weight kernels agree across variants", "[kernels][variants]") {
  // Products: each variant is within (k + 3)·u·Σ|x·w| of exact (test_linear_typed.cpp, float32
  // math), so two differ by at most twice that. The quantizer and gathers must agree bit for bit.
  std::mt19937 rng = test::test_rng(74);
  for (const WeightType type : {WeightType::kF32, WeightType::kBF16, WeightType::kF16, WeightType::kInt8}) {
    for (const auto [m, k, n] : {std::tuple{1, 768, 300}, std::tuple{7, 128, 97}, std::tuple{64, 256, 83}}) {
      for (const bool transposed : {false, true}) {
        INFO(weight_type_name(type) << (transposed ? " transposed" : "") << " m " << m << " k " << k << " n " << n);
        const auto w = test::random_typed_matrix(rng, type, k, n, !transposed);
        const auto x = test::random_floats(rng, size_t(m * k), -1, 1);
        const auto bias = test::random_floats(rng, size_t(n), -1, 1);
        const auto ys = under_each_variant([&] {
          std::vector<float> y(static_cast<size_t>(m * n));
          if (transposed) {
            cpu::linear_transposed_typed(x.data(), k, w.view(), y.data(), n, m, k, n, GemmMath::kFp32);
          } else {
            cpu::linear_typed(x.data(), k, w.view(), bias.data(), y.data(), n, m, k, n, GemmMath::kFp32);
          }
          return y;
        });
        std::vector<double> bound(size_t(m * n));
        for (int64_t r = 0; r < m; ++r)
          for (int64_t c = 0; c < n; ++c) {
            double mag = transposed ? 0.0 : std::abs(bias[size_t(c)]);
            for (int64_t i = 0; i < k; ++i)
              mag += std::abs(double(x[size_t(r * k + i)]) * w.values[size_t(transposed ? c * k + i : i * n + c)]);
            bound[size_t(r * n + c)] = 2 * test::kFirstOrderMargin * double(k + 3) * test::kFloatEps * mag;
          }
        const std::vector<double> fastest(ys[0].begin(), ys[0].end());
        for (size_t v = 1; v < ys.size(); ++v) {
          INFO("variant " << cpu::supported_isas()[v]);
          test::check_within(ys[v], fastest, bound);
        }
      }
    }
  }
  const int64_t k = 96, n = 301;
  const auto w = test::random_floats(rng, size_t(k * n), -2, 2);
  const auto quantized = under_each_variant([&] {
    std::vector<int8_t> q(w.size() * 2);
    std::vector<float> scales(size_t(2 * k / kInt8Block * n));
    cpu::quantize_int8(w.data(), k, n, true, q.data(), scales.data());
    cpu::quantize_int8(w.data(), n, k, false, q.data() + w.size(), scales.data() + scales.size() / 2);
    std::vector<float> out(scales);
    for (const int8_t v : q) out.push_back(float(v));
    return out;
  });
  const auto typed = test::random_typed_matrix(rng, WeightType::kInt8, k, n, false);
  const std::vector<int32_t> rows = {0, 300, 17, 17, 5};
  const auto gathered = under_each_variant([&] {
    std::vector<float> out(rows.size() * size_t(k));
    cpu::gather_rows_typed(typed.view(), k, rows.data(), int64_t(rows.size()), out.data());
    return out;
  });
  for (size_t v = 1; v < quantized.size(); ++v) {
    INFO("variant " << cpu::supported_isas()[v]);
    CHECK(same_bits(quantized[v], quantized[0]));
    CHECK(same_bits(gathered[v], gathered[0]));
  }
}

TEST_CASE("linear_paired agrees across variants", "[kernels][variants]") {
  // Every variant rounds x to bf16 alike (nearest even) and multiplies exactly; only the sums
  // differ (vdpbf16ps's, or float32 ones: the portable variants): each within (k + 3)·u·Σ|x̃·w|
  // of exact, so two within twice that, |x̃| <= (1 + 2^-8)·|x|.
  std::mt19937 rng = test::test_rng(75);
  const int64_t m = 9, k = 768, n = 96;
  const auto w = test::random_typed_matrix(rng, WeightType::kBF16, k, n, true);
  const auto panels = test::in_panels(rng, w, k, n);
  const auto x = test::random_floats(rng, size_t(m * k), -1, 1);
  const auto bias = test::random_floats(rng, size_t(n), -1, 1);
  const auto ys = under_each_variant([&] {
    std::vector<float> y(static_cast<size_t>(m * n));
    cpu::linear_paired(x.data(), k, panels.view(), bias.data(), y.data(), n, m, k, n, GemmMath::kBf16);
    return y;
  });
  std::vector<double> bound(size_t(m * n));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) {
      double mag = std::abs(bias[size_t(c)]);
      for (int64_t i = 0; i < k; ++i)
        mag += (1 + 0x1p-8) * std::abs(double(x[size_t(r * k + i)]) * w.values[size_t(i * n + c)]);
      bound[size_t(r * n + c)] = 2 * test::kFirstOrderMargin * double(k + 3) * test::kFloatEps * mag;
    }
  const std::vector<double> fastest(ys[0].begin(), ys[0].end());
  for (size_t v = 1; v < ys.size(); ++v) {
    INFO("variant " << cpu::supported_isas()[v]);
    test::check_within(ys[v], fastest, bound);
  }
}

TEST_CASE("a model's logits agree across variants", "[kernels][variants][model]") {
  // Float32 sums in different orders: each logit within about K·2^-24 of exact per product of
  // K <= 4·n_embd terms, amplified O(10) by the layer norms of two layers (test_cuda_forward.cpp
  // argues the same bound for CUDA against the CPU); 2e-4 of the logits' scale leaves a margin
  // while a wrong kernel moves logits by a good fraction of their scale.
  const gpt2::Config c = test::tiny_config(2, 64, 4, 96, 211);
  auto model = gpt2::Model::from_parameters(c, test::random_parameters(c, 13), Device::kCpu);
  std::mt19937 rng = test::test_rng(73);
  std::vector<int32_t> a(70), b(5);
  for (auto& t : a) t = int32_t(rng() % 211);
  for (auto& t : b) t = int32_t(rng() % 211);
  const auto logits = under_each_variant([&] {
    gpt2::ForwardLimits lim;
    lim.max_slots = 2;
    lim.all_logits = true;
    gpt2::ForwardPass fwd(model, lim);
    const Tensor t = fwd.step({{0, 0, a.data(), 70}, {1, 0, b.data(), 5}}, gpt2::LogitsFor::kAllTokens);
    return std::vector<float>(t.f32(), t.f32() + t.numel());
  });
  double scale = 0;
  for (float v : logits[0]) scale = std::max(scale, double(std::abs(v)));
  const std::vector<double> fastest(logits[0].begin(), logits[0].end());
  for (size_t v = 1; v < logits.size(); ++v) {
    INFO("variant " << cpu::supported_isas()[v]);
    test::check_close(logits[v], fastest, 2e-4 * scale, 0.0);
  }
}
