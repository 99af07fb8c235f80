// The forward pass against the double-precision reference: full prompts, cached decoding token
// by token, ragged batches, chunked prefill, and rejected inputs; and batch invariance: a
// sequence's logits bit for bit the same alone as among others, in any slot, with any chunking.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/core/backend.h"
#include "engine/core/error.h"
#include "kernels/cpu/cpu_ops.h"
#include "models/gpt2/forward.h"
#include "test/models/reference_gpt2.h"
#include "test/models/test_models_util.h"

using namespace eagerlm;
using namespace eagerlm::gpt2;

namespace {

// Worst |got - ref| relative to the largest reference logit. float32 kernels accumulate
// rounding of about K·2^-24 per dot product (K ≤ 4·n_embd = 192 here, ~1e-5) through two
// blocks whose layer norms rescale by O(10); 2e-4 of the logit scale leaves a 10x margin while
// any real bug (a wrong mask, position or weight) moves logits by O(1).
constexpr double kTolerance = 2e-4;

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

void check_logits(const float* got, const std::vector<double>& ref, const std::string& where) {
  const double scale = std::max(1.0, max_abs(ref));
  double worst = 0;
  size_t at = 0;
  for (size_t v = 0; v < ref.size(); ++v) {
    const double e = std::abs(double(got[v]) - ref[v]);
    if (!(e <= worst)) worst = e, at = v;  // NaN-safe: a NaN becomes the worst
  }
  INFO(where << ": worst error " << worst << " at vocab " << at << " (got " << got[at] << ", ref " << ref[at]
             << "), scale " << scale);
  CHECK(worst <= kTolerance * scale);
}

std::vector<int32_t> random_tokens(size_t n, int64_t vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t(n);
  for (auto& x : t) x = int32_t(rng() % uint32_t(vocab));
  return t;
}

}  // namespace

TEST_CASE("full-prompt logits match the double reference at every position", "[forward]") {
  for (auto cfg : {test::tiny_config(), test::tiny_config(3, 40, 5, 70, 101), test::tiny_config(1, 12, 1, 17, 33)}) {
    auto params = test::random_parameters(cfg, 1234);
    reference::Gpt2Reference ref(cfg, params);
    auto model = Model::from_parameters(cfg, params, Device::kCpu);
    ForwardLimits lim;
    lim.all_logits = true;
    ForwardPass fwd(model, lim);
    const auto tokens =
        random_tokens(size_t(std::min<int64_t>(cfg.n_positions, 37)), cfg.vocab_size, uint32_t(cfg.n_embd));
    const auto want = ref.logits(tokens);
    Tensor logits = fwd.step({{0, 0, tokens.data(), int32_t(tokens.size())}}, LogitsFor::kAllTokens);
    REQUIRE(logits.size(0) == int64_t(tokens.size()));
    for (size_t t = 0; t < tokens.size(); ++t)
      check_logits(logits.f32() + t * size_t(cfg.vocab_size), want[t], "position " + std::to_string(t));
  }
}

TEST_CASE("cached decoding equals a full forward pass at every step", "[forward][cache]") {
  const auto cfg = test::tiny_config();
  auto params = test::random_parameters(cfg, 99);
  reference::Gpt2Reference ref(cfg, params);
  ForwardPass fwd(Model::from_parameters(cfg, params, Device::kCpu), {});
  const auto tokens = random_tokens(70, cfg.vocab_size, 7);  // crosses the 64-position block
  const auto want = ref.logits(tokens);
  const int32_t prompt = 5;
  Tensor logits = fwd.step({{0, 0, tokens.data(), prompt}}, LogitsFor::kLastToken);
  check_logits(logits.f32(), want[prompt - 1], "prefill");
  for (int32_t pos = prompt; pos < int32_t(tokens.size()); ++pos) {
    logits = fwd.step({{0, pos, tokens.data() + pos, 1}}, LogitsFor::kLastToken);
    check_logits(logits.f32(), want[size_t(pos)], "decode position " + std::to_string(pos));
  }
}

TEST_CASE("a ragged batch gives each sequence what it gets alone", "[forward][batch]") {
  const auto cfg = test::tiny_config();
  auto params = test::random_parameters(cfg, 5);
  reference::Gpt2Reference ref(cfg, params);
  ForwardLimits lim;
  lim.max_slots = 4;
  ForwardPass fwd(Model::from_parameters(cfg, params, Device::kCpu), lim);
  const std::vector<std::vector<int32_t>> seqs = {
      random_tokens(9, cfg.vocab_size, 1), random_tokens(1, cfg.vocab_size, 2), random_tokens(66, cfg.vocab_size, 3)};
  // Prefill all three at once into slots 2, 0, 3 (slot 1 unused), then decode them together.
  std::vector<SequenceStep> step;
  const int32_t slots[] = {2, 0, 3};
  for (size_t s = 0; s < seqs.size(); ++s) step.push_back({slots[s], 0, seqs[s].data(), int32_t(seqs[s].size()) - 1});
  step[1].n_tokens = 1;  // the one-token sequence is prefilled with its only token
  Tensor logits = fwd.step(step, LogitsFor::kLastToken);
  for (size_t s = 0; s < seqs.size(); ++s) {
    const auto want = ref.logits(seqs[s]);
    check_logits(logits.f32() + s * size_t(cfg.vocab_size), want[size_t(step[s].n_tokens - 1)],
                 "prefill of sequence " + std::to_string(s));
  }
  std::vector<SequenceStep> decode;
  for (size_t s = 0; s < seqs.size(); ++s)
    if (s != 1) decode.push_back({slots[s], int32_t(seqs[s].size()) - 1, seqs[s].data() + seqs[s].size() - 1, 1});
  logits = fwd.step(decode, LogitsFor::kLastToken);
  check_logits(logits.f32(), ref.logits(seqs[0]).back(), "decode of sequence 0");
  check_logits(logits.f32() + cfg.vocab_size, ref.logits(seqs[2]).back(), "decode of sequence 2");
}

TEST_CASE("a prompt fed in chunks equals one pass", "[forward][chunks]") {
  const auto cfg = test::tiny_config();
  auto params = test::random_parameters(cfg, 11);
  reference::Gpt2Reference ref(cfg, params);
  ForwardLimits lim;
  lim.max_step_rows = 16;
  ForwardPass fwd(Model::from_parameters(cfg, params, Device::kCpu), lim);
  const auto tokens = random_tokens(50, cfg.vocab_size, 21);
  Tensor logits;
  for (int32_t start = 0; start < 50; start += 16)
    logits = fwd.step({{0, start, tokens.data() + start, std::min(16, 50 - start)}}, LogitsFor::kLastToken);
  check_logits(logits.f32(), ref.logits(tokens).back(), "after chunks");
}

// What the continuous-batching engine relies on to return, for a request run among others, the
// very logprobs it returns alone (docs/architecture.md, "Batch invariance"). Alone: a 20-token
// prompt in one step, then 12 decode steps. Among others: the same prompt in chunks of 7 and 13
// alongside other sequences' prefill and decode rows, in another cache slot, then decode steps
// of 1 to 3 sequences with it first, middle or last.
namespace {

void check_batch_invariance(const Config& cfg, const ModelOptions& options) {
  auto params = test::random_parameters(cfg, 17);
  const auto model = Model::from_parameters(cfg, params, Device::kCpu, options);
  const auto tokens = random_tokens(32, cfg.vocab_size, 41);
  const auto other_b = random_tokens(40, cfg.vocab_size, 42), other_c = random_tokens(40, cfg.vocab_size, 43);
  const size_t vocab = size_t(cfg.vocab_size);
  constexpr int32_t kPrompt = 20;

  std::vector<std::vector<float>> alone;  // logits after the prompt, then after each decode step
  {
    ForwardPass fwd(model, {});
    Tensor logits = fwd.step({{0, 0, tokens.data(), kPrompt}}, LogitsFor::kLastToken);
    alone.emplace_back(logits.f32(), logits.f32() + vocab);
    for (int32_t pos = kPrompt; pos < int32_t(tokens.size()); ++pos) {
      logits = fwd.step({{0, pos, tokens.data() + pos, 1}}, LogitsFor::kLastToken);
      alone.emplace_back(logits.f32(), logits.f32() + vocab);
    }
  }

  ForwardLimits lim;
  lim.max_slots = 4;
  ForwardPass fwd(model, lim);
  auto same = [&](const Tensor& logits, size_t row, size_t step) {
    INFO("step " << step << ", row " << row);
    CHECK(std::memcmp(logits.f32() + row * vocab, alone[step].data(), vocab * sizeof(float)) == 0);
  };
  // Sequence B prefills 9 tokens beside A's first chunk (A's logits there are not compared: the
  // alone run never stops at position 7); then A's second chunk beside B's decode and C's prefill.
  fwd.step({{0, 0, other_b.data(), 9}, {2, 0, tokens.data(), 7}}, LogitsFor::kLastToken);
  Tensor logits =
      fwd.step({{0, 9, other_b.data() + 9, 1}, {2, 7, tokens.data() + 7, kPrompt - 7}, {3, 0, other_c.data(), 5}},
               LogitsFor::kLastToken);
  same(logits, 1, 0);
  int32_t b_len = 10, c_len = 5;
  for (int32_t pos = kPrompt; pos < int32_t(tokens.size()); ++pos) {
    const size_t step = size_t(pos - kPrompt + 1);
    const SequenceStep a{2, pos, tokens.data() + pos, 1};
    const SequenceStep b{0, b_len, other_b.data() + b_len, 1};
    const SequenceStep c{3, c_len, other_c.data() + c_len, 1};
    switch (step % 4) {
      case 0: logits = fwd.step({a}, LogitsFor::kLastToken), same(logits, 0, step); break;
      case 1: logits = fwd.step({b, a, c}, LogitsFor::kLastToken), same(logits, 1, step), ++b_len, ++c_len; break;
      case 2: logits = fwd.step({c, b, a}, LogitsFor::kLastToken), same(logits, 2, step), ++b_len, ++c_len; break;
      case 3: logits = fwd.step({a, b}, LogitsFor::kLastToken), same(logits, 0, step), ++b_len; break;
    }
  }
}

}  // namespace

TEST_CASE("a sequence's logits are bit-identical alone and among others", "[forward][batch_invariance]") {
  check_batch_invariance(test::tiny_config(), {});
}

TEST_CASE("int8 weights keep a sequence's logits bit-identical among others", "[forward][batch_invariance][typed]") {
  // Held in panels where the variant has AVX-512 (linear_int8_panels.cpp), input-major elsewhere:
  // one chain per element either way. d = 64: whole int8 blocks.
  INFO("int8 layers held " << (backend_for(Device::kCpu).linear_layout(WeightType::kInt8, 64, 64, GemmMath::kFp32) ==
                                       WeightLayout::kPanels
                                   ? "in panels"
                                   : "input-major"));
  ModelOptions int8;
  int8.weights = WeightType::kInt8;
  check_batch_invariance(test::tiny_config(2, 64, 4), int8);
}

TEST_CASE("bf16 math on paired panels keeps a sequence's logits bit-identical among others",
          "[forward][batch_invariance][typed]") {
  // Every product of a model held in panels (the block matrices and the head's copy) is one chain
  // per element whatever the rows (kernels/cpu/linear_paired.cpp). d = 64: whole vectors of pairs.
  const auto cfg = test::tiny_config(2, 64, 4);
  if (!cpu::has_bf16_gemm() ||
      backend_for(Device::kCpu).linear_layout(WeightType::kBF16, cfg.n_embd, cfg.n_embd, GemmMath::kBf16) !=
          WeightLayout::kPanels) {
    WARN("skipped: the " << cpu::active_isa() << " kernels hold no paired panels here (AMX, or no bf16 GEMM)");
    return;
  }
  ModelOptions bf16_math;
  bf16_math.weights = WeightType::kBF16;
  bf16_math.gemm_math = GemmMath::kBf16;
  check_batch_invariance(cfg, bf16_math);
}

TEST_CASE("steps with out-of-range inputs are rejected, not run", "[forward][errors]") {
  const auto cfg = test::tiny_config();
  ForwardLimits lim;
  lim.max_slots = 2;
  lim.max_step_rows = 8;
  ForwardPass fwd(Model::from_parameters(cfg, test::random_parameters(cfg, 1), Device::kCpu), lim);
  const std::vector<int32_t> ok = {1, 2, 3}, bad_id = {1, int32_t(cfg.vocab_size)}, neg = {-1};
  const std::vector<int32_t> long_prompt(9, 1);
  auto rejects = [&](std::vector<SequenceStep> s) { CHECK_THROWS_AS(fwd.step(s, LogitsFor::kLastToken), Error); };
  rejects({{0, 0, bad_id.data(), 2}});
  rejects({{0, 0, neg.data(), 1}});
  rejects({{2, 0, ok.data(), 3}});                             // slot out of range
  rejects({{0, 0, ok.data(), 3}, {0, 0, ok.data(), 3}});       // slot used twice
  rejects({{0, int32_t(cfg.n_positions) - 2, ok.data(), 3}});  // past the context
  rejects({{0, 0, long_prompt.data(), 9}});                    // more rows than planned
  rejects({});
  CHECK_THROWS_AS(fwd.step({{0, 0, ok.data(), 3}}, LogitsFor::kAllTokens), Error);  // not planned
  CHECK_NOTHROW(fwd.step({{0, 0, ok.data(), 3}}, LogitsFor::kLastToken));
}
