// embedding against the double reference: random ids (with repeats) and positions. Each element is
// one float sum, correctly rounded, so the bound is u·|ref| with u = 2^-24.
#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_ops.h"
#include "test/reference/compare.h"
#include "test/reference/embedding.h"

namespace ref = eagerlm::reference;

TEST_CASE("embedding matches the double reference", "[kernels][embedding]") {
  auto rng = ref::test_rng(51);
  const int32_t vocab = 101, n_positions = 67;
  for (const int64_t d_model : {1, 3, 17, 64, 769}) {
    const auto wte = ref::random_floats(rng, size_t(vocab * d_model), -1.0f, 1.0f);
    const auto wpe = ref::random_floats(rng, size_t(n_positions * d_model), -0.1f, 0.1f);
    for (const int64_t n_tokens : {1, 3, 17, 130}) {
      INFO("d_model=" << d_model << " n_tokens=" << n_tokens);
      std::uniform_int_distribution<int32_t> id_dist(0, vocab - 1), pos_dist(0, n_positions - 1);
      std::vector<int32_t> ids(static_cast<size_t>(n_tokens)), positions(ids.size());
      for (auto& id : ids) id = id_dist(rng);
      for (auto& p : positions) p = pos_dist(rng);
      ids[0] = vocab - 1;  // the last rows of both tables are reachable
      positions[0] = n_positions - 1;

      std::vector<float> y(size_t(n_tokens * d_model), 9.0f);
      eagerlm::cpu::embedding(ids.data(), positions.data(), n_tokens, wte.data(), wpe.data(),
                              d_model, y.data());
      const auto want =
          ref::embedding(ids.data(), positions.data(), n_tokens, wte.data(), wpe.data(), d_model);
      ref::check_close(y, want, 0.0, ref::kFloatEps);
    }
  }
}
