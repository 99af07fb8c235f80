// The host/device-shared arithmetic of device sampling (kernels/common/sampling_philox.h,
// kernels/common/sampling_thresholds.h) run on the CPU: Philox against Random123's known answers, the
// logit key against float comparison, the penalty against apply_repetition_penalty bit for bit,
// the key descent and the tie count against brute force, and the whole cut (top-k, top-p, min-p)
// driven through a plain-loop Row against Sampler::candidates, the independent reference. Also
// the generation loop driving a StepModel that samples on its device.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <stdexcept>

#include "engine/generation/generator.h"
#include "engine/generation/sampling.h"
#include "kernels/common/sampling_philox.h"
#include "kernels/common/sampling_thresholds.h"
#include "test/generation/sampling_test_support.h"

using namespace eagerlm;
using namespace eagerlm::sampling;

using eagerlm::test::chi2_bound;
using eagerlm::test::chi_square;
using eagerlm::test::cut_is_ambiguous;
using eagerlm::test::random_logits;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

uint32_t float_bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// find_cut's Row as plain loops over the (penalized) logits.
struct HostRow {
  const std::vector<float>& values;
  const Weigher& weigher;

  void count_ge(const uint32_t c[3], uint64_t n[3]) {
    n[0] = n[1] = n[2] = 0;
    for (float v : values)
      for (int j = 0; j < 3; ++j) n[j] += logit_key(v) >= c[j];
  }
  void mass_ge(const uint32_t c[3], uint32_t floor_key, uint64_t m[3]) {
    m[0] = m[1] = m[2] = 0;
    for (float v : values) {
      const uint32_t key = logit_key(v);
      if (key <= floor_key) continue;
      for (int j = 0; j < 3; ++j) m[j] += key >= c[j] ? weigher.weight(v) : 0;
    }
  }
  LevelStats stats_at(uint32_t t) {
    LevelStats s;
    for (float v : values) {
      const uint32_t key = logit_key(v);
      if (key > t) {
        ++s.count_gt;
        s.mass_gt += weigher.weight(v);
      } else if (key == t) {
        ++s.count_eq;
      }
    }
    return s;
  }
};

// What sample.cu computes for one row, with a sequential Row and a sequential draw: the kept
// tokens in id order, their fixed-point weights, and the argmax.
struct Emulated {
  std::vector<int32_t> kept;
  std::vector<uint64_t> weights;
  int32_t argmax = 0;

  int32_t draw(double u) const {
    uint64_t total = 0;
    for (uint64_t w : weights) total += w;
    if (total == 0) return argmax;
    uint64_t target = uint64_t(u * double(total));
    if (target >= total) target = total - 1;
    uint64_t acc = 0;
    for (size_t i = 0; i < kept.size(); ++i)
      if ((acc += weights[i]) > target) return kept[i];
    return argmax;
  }
};

Emulated emulate(std::vector<float> v, const std::vector<int32_t>& seen, const SamplingOptions& o) {
  const int64_t vocab = int64_t(v.size());
  std::set<int32_t> present(seen.begin(), seen.end());
  if (o.repetition_penalty != 1.0f)
    for (int32_t t : present) v[size_t(t)] = penalized(v[size_t(t)], o.repetition_penalty);
  Emulated e;
  uint32_t max_key = 0;
  for (int64_t i = 0; i < vocab; ++i)
    if (logit_key(v[size_t(i)]) > max_key || i == 0) {
      max_key = logit_key(v[size_t(i)]);
      e.argmax = int32_t(i);
    }
  const Rule rule = make_rule(vocab, o.temperature, o.top_k, o.top_p, o.min_p, o.repetition_penalty);
  if (rule.greedy || rule.top_k == 1 || !std::isfinite(key_logit(max_key))) {
    e.kept = {e.argmax};
    e.weights = {1};
    return e;
  }
  const Weigher weigher{key_logit(max_key), rule.inv_temperature, rule.mass_scale, rule.use_min_p, rule.log_min_p};
  HostRow row{v, weigher};
  const Cut cut = find_cut(row, rule, weigher);
  uint64_t rank = 0;
  for (int64_t i = 0; i < vocab; ++i) {
    const uint32_t key = logit_key(v[size_t(i)]);
    if (is_kept(key, rank, cut, weigher.passes_min_p(v[size_t(i)]))) {
      e.kept.push_back(int32_t(i));
      e.weights.push_back(weigher.weight(v[size_t(i)]));
    }
    if (key == cut.key) ++rank;
  }
  return e;
}

const SamplingOptions kOptionSets[] = {
    // temperature, top_k, top_p, min_p, repetition_penalty, seed
    {1.0f, 0, 1.0f, 0.0f, 1.0f, 1},   {0.7f, 50, 1.0f, 0.0f, 1.0f, 2}, {1.3f, 0, 0.9f, 0.0f, 1.0f, 3},
    {1.0f, 40, 0.8f, 0.05f, 1.0f, 4}, {0.5f, 0, 1.0f, 0.1f, 1.0f, 5},  {1.0f, 5, 0.5f, 0.0f, 1.3f, 6},
    {2.0f, 0, 0.99f, 0.0f, 0.8f, 7},  {1.0f, 3, 1.0f, 0.0f, 1.0f, 8},  {0.0f, 0, 1.0f, 0.0f, 1.5f, 9},
    {1.0f, 1, 0.9f, 0.0f, 1.0f, 10},  {1.0f, 0, 0.3f, 1.0f, 1.0f, 11},
};

}  // namespace

TEST_CASE("philox4x32_10 gives Random123's known answers", "[sampling][philox]") {
  // Random123 tests/kat_vectors, the three "philox4x32 10" lines: counter, key, expected.
  struct Kat {
    PhiloxBlock ctr;
    uint32_t k0, k1;
    PhiloxBlock want;
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, 0, 0, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
      {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
       0xffffffffu,
       0xffffffffu,
       {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
      {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
       0xa4093822u,
       0x299f31d0u,
       {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
  };
  for (const Kat& k : kats) {
    const PhiloxBlock got = philox4x32_10(k.ctr, k.k0, k.k1);
    CHECK(got.x == k.want.x);
    CHECK(got.y == k.want.y);
    CHECK(got.z == k.want.z);
    CHECK(got.w == k.want.w);
  }
  // cuRAND's layout: counter (block lo, block hi, stream lo, stream hi), key (seed lo, seed hi).
  const uint64_t seed = 0x0123456789abcdefull, stream = 0x1122334455667788ull, block = 0x99aabbccddeeff00ull;
  const PhiloxBlock a = philox_stream_block(seed, stream, block);
  const PhiloxBlock b = philox4x32_10({0xddeeff00u, 0x99aabbccu, 0x55667788u, 0x11223344u}, 0x89abcdefu, 0x01234567u);
  CHECK((a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w));
  const double u = philox_uniform(seed, stream, block);
  CHECK(u == double(((uint64_t(a.x) << 32) | a.y) >> 11) * std::ldexp(1.0, -53));
}

// Uniformity of philox_uniform over 16 equal bins: chi-square with 15 degrees of freedom stays
// below 50 (p < 1e-5 for a correct generator; a biased bit would push it into the thousands).
TEST_CASE("philox_uniform draws are uniform and depend on seed, stream and draw", "[sampling][philox]") {
  constexpr int kDraws = 160000, kBins = 16;
  std::vector<int> bins(kBins, 0);
  for (int i = 0; i < kDraws; ++i) {
    const double u = philox_uniform(42, uint64_t(i % 7), uint64_t(i / 7));
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    ++bins[size_t(u * kBins)];
  }
  double chi2 = 0;
  const double expected = double(kDraws) / kBins;
  for (int b : bins) chi2 += (b - expected) * (b - expected) / expected;
  CHECK(chi2 < 50.0);
  CHECK(philox_uniform(1, 0, 0) != philox_uniform(2, 0, 0));
  CHECK(philox_uniform(1, 0, 0) != philox_uniform(1, 1, 0));
  CHECK(philox_uniform(1, 0, 0) != philox_uniform(1, 0, 1));
}

TEST_CASE("logit_key orders like float comparison, -0 ties +0, NaN below all", "[sampling][key]") {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1e-45f,
                          -1e-45f,
                          1e-38f,
                          -1e-38f,
                          1.0f,
                          -1.0f,
                          3.5f,
                          -3.5f,
                          std::numeric_limits<float>::max(),
                          -std::numeric_limits<float>::max(),
                          kInf,
                          -kInf};
  std::mt19937 rng(7);
  for (float x : random_logits(rng, 200, 10.0f, false)) v.push_back(x);
  for (float a : v) {
    for (float b : v) {
      INFO(a << " vs " << b);
      CHECK((a < b) == (logit_key(a) < logit_key(b)));
      CHECK((a == b) == (logit_key(a) == logit_key(b)));
    }
    const float back = key_logit(logit_key(a));
    CHECK(float_bits(back) == float_bits(a == 0.0f ? 0.0f : a));
    CHECK(logit_key(a) > logit_key(std::nanf("")));
  }
  CHECK(logit_key(std::nanf("")) == 0u);
  CHECK(logit_key(-std::nanf("")) == 0u);
  CHECK(std::isnan(key_logit(0u)));
}

TEST_CASE("penalized matches apply_repetition_penalty bit for bit", "[sampling][penalty]") {
  std::mt19937 rng(11);
  for (float penalty : {1.3f, 0.7f, 2.0f, 1.0001f}) {
    auto logits = random_logits(rng, 1000, 4.0f, false);
    logits[3] = 0.0f;
    logits[4] = -0.0f;
    std::vector<int32_t> seen;
    for (int i = 0; i < 300; ++i) seen.push_back(int32_t(rng() % 1000));
    seen.push_back(3);
    seen.push_back(4);
    auto want = logits;
    apply_repetition_penalty(want.data(), 1000, seen, penalty);
    const std::set<int32_t> present(seen.begin(), seen.end());
    for (size_t i = 0; i < logits.size(); ++i) {
      const float got = present.count(int32_t(i)) ? penalized(logits[i], penalty) : logits[i];
      INFO("token " << i << " logit " << logits[i] << " penalty " << penalty);
      CHECK(float_bits(got) == float_bits(want[i]));
    }
  }
}

TEST_CASE("KeyDescent finds the largest key of a monotone predicate", "[sampling][descent]") {
  std::mt19937 rng(3);
  std::vector<uint32_t> answers = {0u, 1u, 2u, 3u, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu};
  for (int i = 0; i < 200; ++i) answers.push_back(uint32_t(rng()));
  for (uint32_t answer : answers) {
    KeyDescent d;
    int rounds = 0;
    while (!d.done()) {
      int j = 0;
      while (j < 3 && d.candidate(j + 1) <= answer) ++j;
      d.advance(j);
      ++rounds;
    }
    CHECK(d.prefix == answer);
    CHECK(rounds == 16);
  }
}

TEST_CASE("ties_to_reach is the smallest tie count that reaches the target", "[sampling][ties]") {
  std::mt19937 rng(5);
  for (int i = 0; i < 2000; ++i) {
    const uint64_t mass_gt = rng() % 100000, w = 1 + rng() % 5000, group = 1 + rng() % 40;
    const double tau = double(mass_gt) + double(rng() % (w * (group + 2)));
    uint64_t want = group;
    for (uint64_t j = 1; j <= group; ++j)
      if (double(mass_gt + j * w) >= tau) {
        want = j;
        break;
      }
    CHECK(ties_to_reach(mass_gt, w, group, tau) == want);
  }
}

// The whole decision logic against Sampler::candidates. Vocab sizes 1, 7, 1000, 50257; peaked,
// flat and tie-heavy (integer) logits; -inf entries; every option set. The kept sets must be
// equal, except where the CPU's own cut is within 1e-6 of flipping (weights here carry float
// exp's few-ulp error, the CPU's are double): such cases are counted and must stay rare.
TEST_CASE("the shared cut logic keeps exactly Sampler::candidates' tokens", "[sampling][cut]") {
  std::mt19937 rng(Catch::rngSeed() + 17);
  int compared = 0, excused = 0;
  for (size_t vocab : {size_t(1), size_t(7), size_t(1000), size_t(50257)}) {
    for (int shape = 0; shape < 3; ++shape) {
      auto logits = random_logits(rng, vocab, shape == 1 ? 0.5f : 3.0f, shape == 2);
      if (vocab > 7) logits[vocab / 2] = -kInf;
      std::vector<int32_t> seen;
      for (size_t i = 0; i < std::min<size_t>(vocab, 40); ++i) seen.push_back(int32_t(rng() % vocab));
      for (const SamplingOptions& o : kOptionSets) {
        INFO("vocab " << vocab << " shape " << shape << " T " << o.temperature << " top_k " << o.top_k << " top_p "
                      << o.top_p << " min_p " << o.min_p << " penalty " << o.repetition_penalty);
        auto cpu_logits = logits;
        const auto cpu = Sampler(o, 0).candidates(cpu_logits.data(), int64_t(vocab), seen);
        const Emulated dev = emulate(logits, seen, o);
        std::vector<int32_t> cpu_ids;
        for (const auto& c : cpu) cpu_ids.push_back(c.first);
        std::sort(cpu_ids.begin(), cpu_ids.end());
        ++compared;
        if (cpu_ids == dev.kept) continue;
        REQUIRE(cut_is_ambiguous(cpu_logits, o, cpu, 1e-6));
        ++excused;
      }
    }
  }
  INFO(excused << " of " << compared << " cases excused as within rounding of the cut");
  CHECK(excused * 20 <= compared);
}

TEST_CASE("greedy and top_k = 1 pick the argmax with the lowest id among ties", "[sampling][cut]") {
  std::vector<float> logits = {1.0f, 3.0f, -2.0f, 3.0f, 0.0f, 3.0f};
  SamplingOptions o;
  CHECK(emulate(logits, {}, o).kept == std::vector<int32_t>{1});
  o.repetition_penalty = 1.5f;  // 3 / 1.5 = 2 for token 1: token 3 wins
  CHECK(emulate(logits, {1}, o).kept == std::vector<int32_t>{3});
  o = {};
  o.temperature = 1.0f;
  o.top_k = 2;  // ties at the threshold: the lowest ids, exactly k of them
  CHECK(emulate(logits, {}, o).kept == std::vector<int32_t>{1, 3});
  o.top_k = 4;
  CHECK(emulate(logits, {}, o).kept == std::vector<int32_t>{0, 1, 3, 5});
  logits = {-0.0f, 0.0f, -1.0f};  // -0 and +0 tie: the lowest id
  o = {};
  CHECK(emulate(logits, {}, o).kept == std::vector<int32_t>{0});
}

// The fixed-point inverse-CDF draw with Philox uniforms follows the kept probabilities:
// chi-square over the kept tokens (those expected fewer than 5 times merged into one bin)
// against the CPU's candidate probabilities; the bound is the 1 - 1e-6 quantile (Wilson-Hilferty,
// z = 4.75), so a correct draw fails about once in a million runs.
TEST_CASE("emulated draws follow the kept probabilities", "[sampling][draw]") {
  std::mt19937 rng(23);
  const auto logits = random_logits(rng, 1000, 2.0f, false);
  SamplingOptions o;
  o.temperature = 0.9f;
  o.top_p = 0.9f;
  o.top_k = 200;
  auto cpu_logits = logits;
  const auto cpu = Sampler(o, 0).candidates(cpu_logits.data(), 1000, {});
  const Emulated dev = emulate(logits, {}, o);
  constexpr int kDraws = 200000;
  std::map<int32_t, int> counts;
  for (int i = 0; i < kDraws; ++i) ++counts[dev.draw(philox_uniform(99, 0, uint64_t(i)))];
  const auto [chi2, bins] = chi_square(counts, cpu, kDraws);
  CHECK(counts.empty());  // nothing drawn outside the kept set
  const double df = bins - 1;
  const double bound = chi2_bound(df);
  INFO("chi2 " << chi2 << " over " << bins << " bins, bound " << bound);
  CHECK(chi2 < bound);
}

namespace {

// A scripted model that "samples on its device": the next token is a fixed function of the
// sequence's history (as fed), the logprob encodes the draw number, and every request is logged.
class DeviceScripted : public StepModel {
 public:
  int64_t vocab_size() const override { return 50257; }
  int64_t max_slots() const override { return 4; }
  int64_t max_len() const override { return 64; }
  int64_t max_step_rows() const override { return 5; }
  const float* step(const std::vector<SequenceStep>&) override {
    throw std::logic_error("the loop must use step_and_sample");
  }
  bool samples_on_device() const override { return true; }
  void copy_prefix(int32_t, int32_t, int32_t) override { throw std::logic_error("no copies expected"); }
  const SampledToken* step_and_sample(const std::vector<SequenceStep>& seqs,
                                      const std::vector<SampleRequest>& reqs) override {
    out_.assign(seqs.size(), {});
    for (size_t i = 0; i < seqs.size(); ++i) {
      auto& h = history_[seqs[i].slot];
      if (size_t(seqs[i].past_len) != h.size()) throw std::logic_error("past_len does not match the history");
      h.insert(h.end(), seqs[i].tokens, seqs[i].tokens + seqs[i].n_tokens);
      requests_seen.push_back({seqs[i].slot, reqs[i]});
      if (reqs[i].wanted) out_[i] = {next(h), -float(reqs[i].draw)};
    }
    return out_.data();
  }
  static int32_t next(const std::vector<int32_t>& h) {
    uint64_t x = h.size();
    for (int32_t t : h) x = x * 1000003u + uint64_t(t);
    return int32_t(300 + x % 1000);
  }
  std::vector<std::pair<int32_t, SampleRequest>> requests_seen;

 private:
  std::map<int32_t, std::vector<int32_t>> history_;
  std::vector<SampledToken> out_;
};

}  // namespace

TEST_CASE("the generation loop samples through step_and_sample when the model offers it", "[sampling][generator]") {
  const Tokenizer tok = Tokenizer::gpt2();
  DeviceScripted model;
  GenerationOptions o;
  o.max_new_tokens = 6;
  o.logprobs = true;
  const std::vector<std::vector<int32_t>> prompts = {{1, 2, 3, 4, 5, 6, 7, 8}, {9}};
  const auto r = GenerationLoop(model, tok).generate(prompts, o);
  REQUIRE(r.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    std::vector<int32_t> h = prompts[i], want;
    for (int n = 0; n < 6; ++n) h.push_back(want.emplace_back(DeviceScripted::next(h)));
    CHECK(r[i].ids == want);
    CHECK(r[i].logprobs == std::vector<float>{-0.0f, -1.0f, -2.0f, -3.0f, -4.0f, -5.0f});
    CHECK(r[i].text == tok.decode(want));
  }
  // Prompt chunks before the last want no token; each sequence draws 0, 1, 2, ... in its stream.
  std::map<int32_t, uint64_t> draws;
  int chunks_not_wanted = 0;
  for (const auto& [slot, req] : model.requests_seen) {
    CHECK(req.stream == uint64_t(slot));
    if (!req.wanted) {
      ++chunks_not_wanted;
      continue;
    }
    CHECK(req.draw == draws[slot]++);
  }
  CHECK(chunks_not_wanted == 1);  // the 8-token prompt goes in chunks of at most 5
  CHECK(draws[0] == 6);
  CHECK(draws[1] == 6);
}
