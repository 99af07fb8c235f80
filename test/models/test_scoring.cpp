// ForwardPass::step_logprobs against the double-precision reference: every row of a prompt
// scored against its next token, a ragged batch in chunks whose unscored rows are skipped,
// a step that scores nothing (it only fills the cache), the memory it plans, and rejected inputs.
//
// Tolerance: log p(t) = z_t - log Σ exp(z_j) moves by at most 2·max_j |δz_j| when the logits move
// by δz (its gradient is e_t - softmax(z), of 1-norm <= 2), so twice test_forward.cpp's logit
// tolerance (2e-4 of the logit scale, its derivation there), plus the fused kernel's own rounding
// of the log-sum-exp: below (vocab + 2·(max z - min z) + 16)·2^-24 (test_target_logprobs.cpp),
// under 1e-5 for these vocabularies and logits.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

#include "engine/core/error.h"
#include "models/gpt2/forward.h"
#include "test/models/reference_gpt2.h"
#include "test/models/test_models_util.h"

using namespace eagerlm;
using namespace eagerlm::gpt2;

namespace {

constexpr double kLogitTolerance = 2e-4;
constexpr double kFloatEps = 0x1p-24;

std::vector<int32_t> random_tokens(size_t n, int64_t vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t(n);
  for (auto& x : t) x = int32_t(rng() % uint32_t(vocab));
  return t;
}

// log softmax(logits)[target] in double, and the bound described above for it.
struct Expected {
  double value, bound;
};

Expected expected(const std::vector<double>& logits, int32_t target) {
  const double max = *std::max_element(logits.begin(), logits.end());
  const double min = *std::min_element(logits.begin(), logits.end());
  double sum = 0, scale = 1;
  for (double z : logits) sum += std::exp(z - max), scale = std::max(scale, std::abs(z));
  const double rounding = (double(logits.size()) + 2 * (max - min) + 16) * kFloatEps;
  return {logits[size_t(target)] - max - std::log(sum), 2 * kLogitTolerance * scale + rounding};
}

void check_logprob(float got, const Expected& want, const std::string& where) {
  INFO(where << ": got " << got << ", reference " << want.value << ", allowed error " << want.bound);
  CHECK(std::abs(double(got) - want.value) <= want.bound);
}

ForwardLimits scoring_limits(int64_t slots, int64_t rows) {
  ForwardLimits lim;
  lim.max_slots = slots;
  lim.max_step_rows = rows;
  lim.target_logprobs = true;
  return lim;
}

}  // namespace

TEST_CASE("step_logprobs is the log-softmax of the reference logits at the targets", "[forward][scoring]") {
  for (auto cfg : {test::tiny_config(), test::tiny_config(3, 40, 5, 70, 1500), test::tiny_config(1, 12, 1, 17, 33)}) {
    auto params = test::random_parameters(cfg, 4321);
    reference::Gpt2Reference ref(cfg, params);
    ForwardPass fwd(Model::from_parameters(cfg, params, Device::kCpu), scoring_limits(1, 64));
    const size_t n = size_t(std::min<int64_t>(cfg.n_positions, 37));
    const auto tokens = random_tokens(n + 1, cfg.vocab_size, uint32_t(cfg.vocab_size));
    const auto logits = ref.logits(std::vector<int32_t>(tokens.begin(), tokens.begin() + int64_t(n)));
    const std::vector<int32_t> targets(tokens.begin() + 1, tokens.end());
    const Tensor got = fwd.step_logprobs({{0, 0, tokens.data(), int32_t(n)}}, targets);
    REQUIRE(got.numel() == int64_t(n));
    for (size_t t = 0; t < n; ++t)
      check_logprob(got.f32()[t], expected(logits[t], targets[t]),
                    "vocab " + std::to_string(cfg.vocab_size) + " position " + std::to_string(t));
  }
}

TEST_CASE("a ragged batch in chunks scores exactly the rows with targets, in row order", "[forward][scoring]") {
  const auto cfg = test::tiny_config();
  auto params = test::random_parameters(cfg, 8);
  reference::Gpt2Reference ref(cfg, params);
  ForwardPass fwd(Model::from_parameters(cfg, params, Device::kCpu), scoring_limits(3, 16));
  const std::vector<std::vector<int32_t>> seqs = {
      random_tokens(21, cfg.vocab_size, 1), random_tokens(4, cfg.vocab_size, 2), random_tokens(12, cfg.vocab_size, 3)};
  // Feed all but each sequence's last token, in slots 2, 0, 1, chunks of at most 16 rows; score
  // positions p with p % 3 != 1 only (runs of scored rows with gaps between them).
  const int32_t slots[] = {2, 0, 1};
  std::vector<int32_t> fed(seqs.size(), 0);
  std::vector<std::vector<float>> got(seqs.size());
  while (true) {
    std::vector<SequenceStep> step;
    std::vector<int32_t> targets;
    std::vector<std::pair<size_t, int32_t>> scored;  // (sequence, position) of each scored row
    int32_t rows = 0;
    for (size_t s = 0; s < seqs.size() && rows < 16; ++s) {
      const int32_t left = int32_t(seqs[s].size()) - 1 - fed[s];
      if (left == 0) continue;
      const int32_t n = std::min(left, 16 - rows);
      step.push_back({slots[s], fed[s], seqs[s].data() + fed[s], n});
      for (int32_t p = fed[s]; p < fed[s] + n; ++p) {
        const bool score = p % 3 != 1;
        targets.push_back(score ? seqs[s][size_t(p + 1)] : -1);
        if (score) scored.push_back({s, p});
      }
      fed[s] += n;
      rows += n;
    }
    if (step.empty()) break;
    const Tensor lp = fwd.step_logprobs(step, targets);
    REQUIRE(lp.numel() == int64_t(scored.size()));
    for (size_t k = 0; k < scored.size(); ++k) {
      const auto [s, p] = scored[k];
      const auto logits = ref.logits(std::vector<int32_t>(seqs[s].begin(), seqs[s].begin() + p + 1));
      check_logprob(lp.f32()[k], expected(logits.back(), seqs[s][size_t(p + 1)]),
                    "sequence " + std::to_string(s) + " position " + std::to_string(p));
    }
  }
}

TEST_CASE("a step that scores nothing fills the cache for the next", "[forward][scoring]") {
  const auto cfg = test::tiny_config();
  auto params = test::random_parameters(cfg, 12);
  reference::Gpt2Reference ref(cfg, params);
  ForwardPass fwd(Model::from_parameters(cfg, params, Device::kCpu), scoring_limits(1, 8));
  const auto tokens = random_tokens(12, cfg.vocab_size, 5);
  const Tensor none = fwd.step_logprobs({{0, 0, tokens.data(), 8}}, std::vector<int32_t>(8, -1));
  CHECK(none.numel() == 0);
  const Tensor lp = fwd.step_logprobs({{0, 8, tokens.data() + 8, 3}}, {tokens[9], tokens[10], tokens[11]});
  REQUIRE(lp.numel() == 3);
  const auto logits = ref.logits(std::vector<int32_t>(tokens.begin(), tokens.begin() + 11));
  for (int32_t p = 8; p < 11; ++p)
    check_logprob(lp.f32()[p - 8], expected(logits[size_t(p)], tokens[size_t(p + 1)]), "position " + std::to_string(p));
}

TEST_CASE("a scoring forward pass plans no [max_step_rows, vocab] logits", "[forward][scoring]") {
  const auto cfg = test::tiny_config(1, 16, 2, 512, 50257);
  auto model = Model::from_parameters(cfg, test::random_parameters(cfg, 3), Device::kCpu);
  ForwardPass scoring(model, scoring_limits(1, 512));
  const size_t all_logits_bytes = size_t(512) * size_t(cfg.vocab_size) * sizeof(float);
  INFO("arena " << scoring.arena_bytes() << " bytes");
  CHECK(scoring.arena_bytes() < all_logits_bytes / 4);
}

TEST_CASE("step_logprobs rejects bad targets and an unplanned pass", "[forward][scoring][errors]") {
  const auto cfg = test::tiny_config();
  auto model = Model::from_parameters(cfg, test::random_parameters(cfg, 1), Device::kCpu);
  ForwardPass fwd(model, scoring_limits(1, 8));
  const std::vector<int32_t> ok = {1, 2, 3};
  // The code of the error thrown, or none.
  auto code_of = [&](const std::vector<int32_t>& targets) -> std::optional<ErrorCode> {
    try {
      fwd.step_logprobs({{0, 0, ok.data(), 3}}, targets);
    } catch (const Error& e) {
      return e.code();
    }
    return std::nullopt;
  };
  CHECK(code_of({1, 2}) == ErrorCode::kInvalidArgument);                           // a target short
  CHECK(code_of({1, 2, int32_t(cfg.vocab_size)}) == ErrorCode::kInvalidArgument);  // outside the vocabulary
  CHECK(code_of({1, -2, 3}) == ErrorCode::kInvalidArgument);
  CHECK(code_of({1, 2, 3}) == std::nullopt);
  ForwardPass plain(model, ForwardLimits{});
  CHECK_THROWS_AS(plain.step_logprobs({{0, 0, ok.data(), 3}}, {1, 2, 3}), Error);
}
