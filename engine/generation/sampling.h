// Choosing the next token from logits: greedy, temperature, top-k, top-p (nucleus), min-p and
// repetition penalty, applied in Hugging Face's order (repetition penalty, temperature, top-k,
// top-p, min-p). Sampling runs on the host with a per-sequence random stream derived from the
// seed and the sequence's index, so the same seed gives the same ids on any thread count and
// any batch composition.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace eagerlm {

struct SamplingOptions {
  float temperature = 0.0f;        // 0: greedy (argmax); > 0: sample
  int32_t top_k = 0;               // 0: disabled
  float top_p = 1.0f;              // 1: disabled; keep the smallest set with mass >= top_p
  float min_p = 0.0f;              // 0: disabled; keep tokens with p >= min_p · p_max
  float repetition_penalty = 1.0f; // 1: disabled; HF/CTRL rule on every token seen so far
  uint64_t seed = 0;

  // Throws Error(kInvalidArgument) naming the option when a value is out of range.
  void validate() const;
  bool greedy() const { return temperature == 0.0f; }
};

class Sampler {
 public:
  Sampler(const SamplingOptions& options, uint64_t sequence_index);

  // Picks a token from logits[vocab] (modified in place: penalties and filters applied).
  // `seen` is every token of the sequence so far (prompt and generated), for the penalty.
  int32_t sample(float* logits, int64_t vocab, const std::vector<int32_t>& seen);

  // The candidate set the filters keep, as (token, probability) sorted by probability
  // descending, renormalized. Exposed for tests; sample() draws from exactly this set.
  std::vector<std::pair<int32_t, double>> candidates(float* logits, int64_t vocab,
                                                     const std::vector<int32_t>& seen) const;

 private:
  SamplingOptions options_;
  std::mt19937_64 rng_;
};

// log p(token) under softmax(logits) — the model's own distribution, before any filter.
float log_softmax_at(const float* logits, int64_t vocab, int32_t token);

void apply_repetition_penalty(float* logits, int64_t vocab, const std::vector<int32_t>& seen, float penalty);
int32_t argmax(const float* logits, int64_t vocab);  // lowest id among ties

}  // namespace eagerlm
