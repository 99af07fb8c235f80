#include "engine/generation/sampling.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string>

#include "engine/core/error.h"

namespace eagerlm {

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

[[noreturn]] void bad_option(const std::string& name, const std::string& expected, double got) {
  throw OptionError(name, expected, number(got));
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
  if (vocab_limit < 0) bad_option("vocab_limit", ">= 0 (0: every id)", double(vocab_limit));
  if (!(presence_penalty >= -2.0f && presence_penalty <= 2.0f)) bad_option("presence_penalty", "in [-2, 2]", presence_penalty);
  if (!(frequency_penalty >= -2.0f && frequency_penalty <= 2.0f))
    bad_option("frequency_penalty", "in [-2, 2]", frequency_penalty);
  for (const auto& [id, bias] : logit_bias) {
    if (id < 0) throw OptionError("logit_bias", "keyed by token ids >= 0", std::to_string(id));
    if (!(bias >= -100.0f && bias <= 100.0f))
      throw OptionError("logit_bias", "values in [-100, 100]", number(bias) + " for token " + std::to_string(id));
  }
  if (no_repeat_ngram_size < 0) bad_option("no_repeat_ngram_size", ">= 0 (0 disables it)", no_repeat_ngram_size);
}

void process_logits(const SamplingOptions& o, float* logits, int64_t vocab, const TokenHistory& h,
                    const std::vector<int32_t>& suppress) {
  for (const auto& [id, bias] : o.logit_bias)
    if (id < vocab) logits[id] += bias;
  apply_repetition_penalty(logits, vocab, h.tokens, o.repetition_penalty);
  if (o.presence_penalty != 0.0f || o.frequency_penalty != 0.0f) {
    // Counts of the generated ids, in the order they first appeared (so the sums are the same
    // whatever the container).
    std::vector<std::pair<int32_t, int32_t>> counts;
    std::vector<int32_t> where(size_t(vocab), -1);
    for (size_t i = h.prompt_len; i < h.tokens.size(); ++i) {
      const int32_t t = h.tokens[i];
      if (t < 0 || t >= vocab) continue;
      if (where[size_t(t)] < 0) {
        where[size_t(t)] = int32_t(counts.size());
        counts.push_back({t, 0});
      }
      ++counts[size_t(where[size_t(t)])].second;
    }
    for (const auto& [t, c] : counts) logits[t] -= o.presence_penalty + o.frequency_penalty * float(c);
  }
  const size_t n = size_t(o.no_repeat_ngram_size), len = h.tokens.size();
  if (n > 0 && len + 1 >= n) {
    // Hugging Face's rule: the last n-1 tokens followed by t must not form an n-gram that
    // already occurs in the sequence (prompt included).
    const int32_t* seq = h.tokens.data();
    for (size_t start = 0; start + n <= len; ++start) {
      bool same = true;
      for (size_t j = 0; j + 1 < n && same; ++j) same = seq[start + j] == seq[len - (n - 1) + j];
      const int32_t banned = seq[start + n - 1];
      if (same && banned >= 0 && banned < vocab) logits[banned] = -std::numeric_limits<float>::infinity();
    }
  }
  for (int32_t t : suppress)
    if (t >= 0 && t < vocab) logits[t] = -std::numeric_limits<float>::infinity();
}

Sampler::Sampler(const SamplingOptions& options, uint64_t sequence_index)
    : options_(options), rng_(mix(options.seed.value_or(0) ^ mix(sequence_index))) {
  options_.validate();
}

SampleParams sample_params(const SamplingOptions& o, bool logprobs) {
  SampleParams p;
  p.temperature = o.temperature;
  p.top_k = o.top_k;
  p.top_p = o.top_p;
  p.min_p = o.min_p;
  p.repetition_penalty = o.repetition_penalty;
  p.seed = o.seed.value_or(0);
  p.logprobs = logprobs;
  return p;
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

std::vector<TokenLogprob> top_log_softmax(const float* logits, int64_t vocab, int32_t count) {
  const size_t keep = size_t(std::min<int64_t>(std::max(count, 0), vocab));
  if (keep == 0) return {};
  std::vector<int32_t> order(static_cast<size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + long(keep), order.end(), [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  const float mx = logits[order[0]];
  double sum = 0;
  for (int64_t i = 0; i < vocab; ++i) sum += std::exp(double(logits[i]) - mx);
  const double log_sum = std::log(sum);
  std::vector<TokenLogprob> out(keep);
  for (size_t i = 0; i < keep; ++i) out[i] = {order[i], float(double(logits[order[i]]) - mx - log_sum)};
  return out;
}

std::vector<std::pair<int32_t, double>> Sampler::candidates(float* logits, int64_t vocab,
                                                            const std::vector<int32_t>& seen) const {
  apply_repetition_penalty(logits, vocab, seen, options_.repetition_penalty);
  return filtered(logits, vocab);
}

std::vector<std::pair<int32_t, double>> Sampler::filtered(const float* logits, int64_t vocab) const {
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
  // Every id banned (-inf): nothing to weigh, so the lowest id, as argmax gives.
  if (!std::isfinite(logits[order[0]])) return {{order[0], 1.0}};

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
  apply_repetition_penalty(logits, vocab, seen, options_.repetition_penalty);
  return pick(logits, vocab);
}

int32_t Sampler::pick(float* logits, int64_t vocab) {
  const auto c = filtered(logits, vocab);
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
