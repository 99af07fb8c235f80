// Samplers against independent references: the kept sets of top-k / top-p / min-p computed
// by brute force, draws against the exact distribution, reproducibility, option validation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "engine/core/error.h"
#include "engine/generation/sampling.h"

using namespace eagerlm;

namespace {

std::vector<float> random_logits(size_t n, uint32_t seed, float scale = 3.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Exact softmax at temperature t over all tokens, in double.
std::vector<double> softmax(const std::vector<float>& l, double t) {
  double mx = *std::max_element(l.begin(), l.end());
  std::vector<double> p(l.size());
  double s = 0;
  for (size_t i = 0; i < l.size(); ++i) s += (p[i] = std::exp((l[i] - mx) / t));
  for (auto& x : p) x /= s;
  return p;
}

// The kept set by brute force: a token is kept by top-k if fewer than k tokens beat it, by
// top-p if the mass of tokens strictly more likely than it is below p (within the top-k
// renormalized distribution), by min-p if p >= min_p · p_max.
std::set<int32_t> expected_set(const std::vector<float>& l, double t, int k, double top_p, double min_p) {
  const auto p_all = softmax(l, t);
  std::set<int32_t> topk;
  for (size_t i = 0; i < l.size(); ++i) {
    size_t better = 0;
    for (size_t j = 0; j < l.size(); ++j) better += (l[j] > l[i] || (l[j] == l[i] && j < i));
    if (k == 0 || better < size_t(k)) topk.insert(int32_t(i));
  }
  double z = 0;
  for (int32_t i : topk) z += p_all[size_t(i)];
  std::set<int32_t> after_p;
  for (int32_t i : topk) {
    double above = 0;
    for (int32_t j : topk)
      if (l[size_t(j)] > l[size_t(i)] || (l[size_t(j)] == l[size_t(i)] && j < i)) above += p_all[size_t(j)] / z;
    if (top_p >= 1.0 || above < top_p) after_p.insert(i);
  }
  double pmax = 0;
  for (int32_t i : after_p) pmax = std::max(pmax, p_all[size_t(i)]);
  std::set<int32_t> out;
  for (int32_t i : after_p)
    if (p_all[size_t(i)] >= min_p * pmax) out.insert(i);
  return out;
}

}  // namespace

TEST_CASE("greedy picks the argmax, lowest id among ties", "[sampling]") {
  std::vector<float> l = {0.5f, 2.0f, -1.0f, 2.0f};
  Sampler s({}, 0);
  CHECK(s.sample(l.data(), 4, {}) == 1);
  auto r = random_logits(1000, 3);
  const auto best = int32_t(std::max_element(r.begin(), r.end()) - r.begin());
  CHECK(Sampler({}, 0).sample(r.data(), 1000, {}) == best);
}

TEST_CASE("top-k, top-p and min-p keep exactly the right set", "[sampling]") {
  struct Case {
    float t;
    int k;
    float p;
    float min_p;
  };
  const Case cases[] = {{1.0f, 5, 1.0f, 0.0f}, {1.0f, 0, 0.9f, 0.0f},    {0.7f, 0, 0.5f, 0.0f}, {1.3f, 20, 0.8f, 0.0f},
                        {1.0f, 0, 1.0f, 0.1f}, {0.9f, 50, 0.95f, 0.05f}, {1.0f, 1, 1.0f, 0.0f}, {2.0f, 0, 0.01f, 0.0f}};
  for (uint32_t seed = 1; seed <= 5; ++seed)
    for (const auto& c : cases) {
      const auto logits = random_logits(200, seed);
      SamplingOptions o;
      o.temperature = c.t, o.top_k = c.k, o.top_p = c.p, o.min_p = c.min_p;
      auto work = logits;
      const auto kept = Sampler(o, 0).candidates(work.data(), 200, {});
      std::set<int32_t> got;
      double mass = 0;
      for (const auto& [tok, prob] : kept) got.insert(tok), mass += prob;
      INFO("seed " << seed << " t " << c.t << " k " << c.k << " p " << c.p << " min_p " << c.min_p);
      CHECK(got == expected_set(logits, c.t, c.k, c.p, c.min_p));
      CHECK(mass == Approx(1.0).epsilon(1e-12));
    }
}

TEST_CASE("draws follow the filtered distribution", "[sampling]") {
  // 200k draws from 8 tokens at T = 0.7: each frequency within 5 standard deviations of its
  // exact probability (a false failure has probability < 1e-5).
  const std::vector<float> logits = {1.0f, 0.2f, -0.5f, 2.0f, 0.0f, 1.5f, -2.0f, 0.7f};
  SamplingOptions o;
  o.temperature = 0.7f, o.top_k = 0, o.top_p = 1.0f, o.seed = 42;
  Sampler s(o, 0);
  const auto p = softmax(logits, 0.7);
  const int n = 200000;
  std::vector<int> count(8, 0);
  for (int i = 0; i < n; ++i) {
    auto work = logits;
    count[size_t(s.sample(work.data(), 8, {}))]++;
  }
  for (size_t i = 0; i < 8; ++i) {
    const double sd = std::sqrt(n * p[i] * (1 - p[i]));
    INFO("token " << i << " count " << count[i] << " expected " << n * p[i]);
    CHECK(std::abs(count[i] - n * p[i]) < 5 * sd + 1);
  }
}

TEST_CASE("same seed and sequence index give the same ids; others differ", "[sampling]") {
  SamplingOptions o;
  o.temperature = 1.0f, o.top_k = 0, o.seed = 7;
  auto draw = [&](uint64_t seed, uint64_t index) {
    SamplingOptions oo = o;
    oo.seed = seed;
    Sampler s(oo, index);
    std::vector<int32_t> ids;
    for (int i = 0; i < 50; ++i) {
      auto l = random_logits(100, uint32_t(i), 1.0f);
      ids.push_back(s.sample(l.data(), 100, {}));
    }
    return ids;
  };
  CHECK(draw(7, 0) == draw(7, 0));
  CHECK(draw(7, 0) != draw(8, 0));
  CHECK(draw(7, 0) != draw(7, 1));
}

TEST_CASE("repetition penalty follows the Hugging Face rule, once per token", "[sampling]") {
  std::vector<float> l = {2.0f, -2.0f, 1.0f, 0.5f};
  apply_repetition_penalty(l.data(), 4, {0, 1, 1, 0, 7, -3}, 2.0f);
  CHECK(l == std::vector<float>{1.0f, -4.0f, 1.0f, 0.5f});
}

TEST_CASE("log_softmax_at matches the double formula", "[sampling]") {
  const auto l = random_logits(500, 9);
  const auto p = softmax(l, 1.0);
  for (int32_t t : {0, 17, 499}) CHECK(log_softmax_at(l.data(), 500, t) == Approx(std::log(p[size_t(t)])).margin(1e-5));
}

TEST_CASE("out-of-range sampling options are rejected by name", "[sampling][errors]") {
  auto rejects = [](SamplingOptions o, const char* name) {
    try {
      o.validate();
      FAIL("accepted " << name);
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kInvalidArgument);
      CHECK_THAT(e.what(), Catch::Contains(name));
    }
  };
  SamplingOptions o;
  o.temperature = -0.1f;
  rejects(o, "temperature");
  o = {}, o.temperature = NAN;
  rejects(o, "temperature");
  o = {}, o.top_k = -1;
  rejects(o, "top_k");
  o = {}, o.top_p = 0.0f;
  rejects(o, "top_p");
  o = {}, o.top_p = 1.5f;
  rejects(o, "top_p");
  o = {}, o.min_p = -0.5f;
  rejects(o, "min_p");
  o = {}, o.repetition_penalty = 0.0f;
  rejects(o, "repetition_penalty");
}
