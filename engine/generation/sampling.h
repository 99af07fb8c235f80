// Choosing the next token from logits. First the logit processors (process_logits), in this
// order: logit_bias, the repetition penalty (Hugging Face's, over prompt and generated tokens),
// OpenAI's presence and frequency penalties (over generated tokens, as vLLM does), Hugging Face's
// no-repeat n-gram ban, and the caller's suppressed ids (min_new_tokens); then the token choice
// (Sampler): greedy, or temperature, top-k, top-p (nucleus) and min-p, in Hugging Face's order.
// Sampling runs on the host with a per-sequence random stream derived from the seed and the
// sequence's stream number, so the same seed gives the same ids on any thread count and any
// batch composition.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "eagerlm/common.hpp"  // TokenLogprob
#include "kernels/common/sampling_types.h"

namespace eagerlm {

struct SamplingOptions {
  float temperature = 0.0f;         // 0: greedy (argmax); > 0: sample
  int32_t top_k = 0;                // 0: disabled
  float top_p = 1.0f;               // 1: disabled; keep the smallest set with mass >= top_p
  float min_p = 0.0f;               // 0: disabled; keep tokens with p >= min_p · p_max
  float repetition_penalty = 1.0f;  // 1: disabled; HF/CTRL rule on every token seen so far
  std::optional<uint64_t> seed;     // unset: a front end draws one (resolve_seed in options.h)
  int64_t vocab_limit = 0;          // sample only ids below it (a padded vocabulary's real ids); 0: all
  float presence_penalty = 0.0f;    // OpenAI's, in [-2, 2]: minus this once per generated token id
  float frequency_penalty = 0.0f;   // OpenAI's, in [-2, 2]: minus this times each id's count so far
  std::vector<std::pair<int32_t, float>> logit_bias;  // (id, bias) added to the logits, bias in [-100, 100]
  int32_t no_repeat_ngram_size = 0;  // ban tokens that would repeat an n-gram of the sequence; 0: off

  // Throws Error(kInvalidArgument) naming the option when a value is out of range.
  void validate() const;
  bool greedy() const { return temperature == 0.0f; }
  // Whether any processor beyond the repetition penalty is on (those run on the host only).
  bool host_processors() const {
    return presence_penalty != 0.0f || frequency_penalty != 0.0f || !logit_bias.empty() || no_repeat_ngram_size > 0;
  }
};

// A sequence's tokens as the processors see them: prompt then generated, and where the
// generated part starts.
struct TokenHistory {
  const std::vector<int32_t>& tokens;
  size_t prompt_len = 0;
};

// Applies the processors of `options` to logits[vocab] in place (see the top of this file);
// `suppress` ids get -inf. The token choice (Sampler::pick) comes after.
void process_logits(const SamplingOptions& options, float* logits, int64_t vocab, const TokenHistory& history,
                    const std::vector<int32_t>& suppress = {});

class Sampler {
 public:
  Sampler(const SamplingOptions& options, uint64_t sequence_index);

  // Picks a token from logits[vocab] (modified in place: penalties and filters applied).
  // `seen` is every token of the sequence so far (prompt and generated), for the repetition
  // penalty; the other processors are not applied (see process_logits).
  int32_t sample(float* logits, int64_t vocab, const std::vector<int32_t>& seen);
  // Picks a token from logits the processors have already been applied to: argmax, or a draw
  // from the filtered distribution at the temperature.
  int32_t pick(float* logits, int64_t vocab);

  // The candidate set the filters keep, as (token, probability) sorted by probability
  // descending, renormalized. Exposed for tests; sample() draws from exactly this set.
  std::vector<std::pair<int32_t, double>> candidates(float* logits, int64_t vocab,
                                                     const std::vector<int32_t>& seen) const;
  // The same without the repetition penalty (logits already processed).
  std::vector<std::pair<int32_t, double>> filtered(const float* logits, int64_t vocab) const;

 private:
  SamplingOptions options_;
  std::mt19937_64 rng_;
};

// log p(token) under softmax(logits) — the model's own distribution, before any filter.
float log_softmax_at(const float* logits, int64_t vocab, int32_t token);
// The `count` most likely ids under softmax(logits) with their log-probabilities, most likely
// first (ties: lower id first).
std::vector<TokenLogprob> top_log_softmax(const float* logits, int64_t vocab, int32_t count);

// The same options as the records of sampling on a device (kernels/common/sampling_types.h).
SampleParams sample_params(const SamplingOptions& options, bool logprobs);

void apply_repetition_penalty(float* logits, int64_t vocab, const std::vector<int32_t>& seen, float penalty);
int32_t argmax(const float* logits, int64_t vocab);  // lowest id among ties

}  // namespace eagerlm
