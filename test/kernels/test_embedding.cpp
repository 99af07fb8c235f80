// embedding against the double reference: random ids (with repeats) and positions. Each element is
// one float sum, correctly rounded, so the bound is u·|ref| with u = 2^-24. A typed wte (bf16,
// f16: widened exactly; int8: s·q rounded once, then the sum) allows u·(|w| + |ref|) + u·|ref|.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_ops.h"
#include "test/kernels/typed_weights.h"
#include "test/reference/embedding.h"
#include "test/support/random.h"
#include "test/support/tolerance.h"

namespace ref = eagerlm::reference;
namespace test = eagerlm::test;

TEST_CASE("embedding matches the double reference", "[kernels][embedding]") {
  auto rng = test::test_rng(51);
  const int32_t vocab = 101, n_positions = 67;
  for (const int64_t d_model : {1, 3, 17, 64, 769}) {
    const auto wte = test::random_floats(rng, size_t(vocab * d_model), -1.0f, 1.0f);
    const auto wpe = test::random_floats(rng, size_t(n_positions * d_model), -0.1f, 0.1f);
    for (const int64_t n_tokens : {1, 3, 17, 130}) {
      INFO("d_model=" << d_model << " n_tokens=" << n_tokens);
      std::uniform_int_distribution<int32_t> id_dist(0, vocab - 1), pos_dist(0, n_positions - 1);
      std::vector<int32_t> ids(static_cast<size_t>(n_tokens)), positions(ids.size());
      for (auto& id : ids) id = id_dist(rng);
      for (auto& p : positions) p = pos_dist(rng);
      ids[0] = vocab - 1;  // the last rows of both tables are reachable
      positions[0] = n_positions - 1;

      std::vector<float> y(size_t(n_tokens * d_model), 9.0f);
      eagerlm::cpu::embedding(ids.data(), positions.data(), n_tokens, {eagerlm::WeightType::kF32, wte.data(), nullptr},
                              wpe.data(), d_model, y.data());
      const auto want = ref::embedding(ids.data(), positions.data(), n_tokens, wte.data(), wpe.data(), d_model);
      test::check_close(y, want, 0.0, test::kFloatEps);
    }
  }
}

TEST_CASE("embedding widens a typed wte", "[kernels][embedding]") {
  using eagerlm::WeightType;
  auto rng = test::test_rng(52);
  const int32_t vocab = 77, n_positions = 40;
  for (const WeightType type : {WeightType::kBF16, WeightType::kF16, WeightType::kInt8}) {
    for (const int64_t d_model : {32, 64, 800}) {
      INFO(eagerlm::weight_type_name(type) << " d_model=" << d_model);
      const auto wte = test::random_typed_matrix(rng, type, d_model, vocab, false);  // output-major [vocab, d]
      const auto wpe = test::random_floats(rng, size_t(n_positions * d_model), -0.1f, 0.1f);
      const int64_t n_tokens = 300;  // enough for the parallel path at d_model = 800
      std::uniform_int_distribution<int32_t> id_dist(0, vocab - 1), pos_dist(0, n_positions - 1);
      std::vector<int32_t> ids(static_cast<size_t>(n_tokens)), positions(ids.size());
      for (auto& id : ids) id = id_dist(rng);
      for (auto& p : positions) p = pos_dist(rng);
      ids[0] = vocab - 1;
      std::vector<float> y(size_t(n_tokens * d_model), 9.0f);
      eagerlm::cpu::embedding(ids.data(), positions.data(), n_tokens, wte.view(), wpe.data(), d_model, y.data());
      std::vector<double> want(y.size()), bound(y.size());
      for (int64_t t = 0; t < n_tokens; ++t) {
        for (int64_t c = 0; c < d_model; ++c) {
          const double w = wte.values[size_t(ids[size_t(t)] * d_model + c)];
          const double v = w + double(wpe[size_t(positions[size_t(t)] * d_model + c)]);
          want[size_t(t * d_model + c)] = v;
          bound[size_t(t * d_model + c)] = test::kFirstOrderMargin * test::kFloatEps * (std::abs(w) + 2 * std::abs(v));
        }
      }
      test::check_within(y, want, bound);
    }
  }
}
