#include "engine/generation/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "engine/core/error.h"

namespace eagerlm {

namespace {

[[noreturn]] void bad_option(const std::string& name, const std::string& expected, double got) {
  throw_error(ErrorCode::kInvalidArgument, name + " must be " + expected + ", got " + std::to_string(got));
}

// splitmix64: decorrelates (seed, sequence index) pairs into independent generator seeds.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

void SamplingOptions::validate() const {
  if (!(temperature >= 0.0f) || !std::isfinite(temperature)) bad_option("temperature", ">= 0", temperature);
  if (top_k < 0) bad_option("top_k", ">= 0 (0 disables it)", top_k);
  if (!(top_p > 0.0f && top_p <= 1.0f)) bad_option("top_p", "in (0, 1]", top_p);
  if (!(min_p >= 0.0f && min_p <= 1.0f)) bad_option("min_p", "in [0, 1]", min_p);
  if (!(repetition_penalty > 0.0f) || !std::isfinite(repetition_penalty))
    bad_option("repetition_penalty", "> 0 (1 disables it)", repetition_penalty);
}

Sampler::Sampler(const SamplingOptions& options, uint64_t sequence_index)
    : options_(options), rng_(mix(options.seed ^ mix(sequence_index))) {
  options_.validate();
}

void apply_repetition_penalty(float* logits, int64_t vocab, const std::vector<int32_t>& seen, float penalty) {
  if (penalty == 1.0f) return;
  std::vector<bool> done(size_t(vocab), false);  // each token penalized once, however often seen
  for (int32_t t : seen) {
    if (t < 0 || t >= vocab || done[size_t(t)]) continue;
    done[size_t(t)] = true;
    float& l = logits[t];
    l = l > 0 ? l / penalty : l * penalty;
  }
}

int32_t argmax(const float* logits, int64_t vocab) {
  int64_t best = 0;
  for (int64_t i = 1; i < vocab; ++i)
    if (logits[i] > logits[best]) best = i;
  return int32_t(best);
}

float log_softmax_at(const float* logits, int64_t vocab, int32_t token) {
  const float mx = *std::max_element(logits, logits + vocab);
  double sum = 0;
  for (int64_t i = 0; i < vocab; ++i) sum += std::exp(double(logits[i]) - mx);
  return float(double(logits[token]) - mx - std::log(sum));
}

std::vector<std::pair<int32_t, double>> Sampler::candidates(float* logits, int64_t vocab,
                                                            const std::vector<int32_t>& seen) const {
  apply_repetition_penalty(logits, vocab, seen, options_.repetition_penalty);
  if (options_.greedy()) return {{argmax(logits, vocab), 1.0}};

  // Order by logit (ties by id); top-k keeps a prefix, so only that much needs sorting.
  std::vector<int32_t> order(static_cast<size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  auto by_logit = [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  size_t keep = size_t(vocab);
  if (options_.top_k > 0 && options_.top_k < vocab) {
    keep = size_t(options_.top_k);
    std::partial_sort(order.begin(), order.begin() + long(keep), order.end(), by_logit);
  } else {
    std::sort(order.begin(), order.end(), by_logit);
  }
  order.resize(keep);

  // Probabilities at temperature T over the kept tokens (softmax is shift-invariant).
  const double inv_t = 1.0 / double(options_.temperature);
  const double top = double(logits[order[0]]);
  std::vector<double> p(keep);
  double sum = 0;
  for (size_t i = 0; i < keep; ++i) sum += (p[i] = std::exp((double(logits[order[i]]) - top) * inv_t));
  for (auto& x : p) x /= sum;

  if (options_.top_p < 1.0f) {  // smallest prefix whose mass reaches top_p
    double mass = 0;
    size_t n = 0;
    while (n < keep && mass < double(options_.top_p)) mass += p[n++];
    keep = std::max<size_t>(n, 1);
  }
  if (options_.min_p > 0.0f) {  // p >= min_p · p_max (p_max = p[0]); renormalization keeps ratios
    size_t n = 1;
    while (n < keep && p[n] >= double(options_.min_p) * p[0]) ++n;
    keep = n;
  }
  std::vector<std::pair<int32_t, double>> out(keep);
  double kept = 0;
  for (size_t i = 0; i < keep; ++i) kept += p[i];
  for (size_t i = 0; i < keep; ++i) out[i] = {order[i], p[i] / kept};
  return out;
}

int32_t Sampler::sample(float* logits, int64_t vocab, const std::vector<int32_t>& seen) {
  const auto c = candidates(logits, vocab, seen);
  if (c.size() == 1) return c[0].first;
  // One 53-bit uniform draw per token; the same draw count whatever the filters keep.
  const double u = double(rng_() >> 11) * 0x1.0p-53;
  double acc = 0;
  for (const auto& [token, prob] : c) {
    acc += prob;
    if (u < acc) return token;
  }
  return c.back().first;  // u within rounding of 1
}

}  // namespace eagerlm
