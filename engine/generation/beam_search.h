// Beam search with Hugging Face Flax's semantics (transformers' FlaxGenerationMixin._beam_search):
// num_beams running hypotheses that never end in end-of-text, a set of finished hypotheses
// scored by sum(logprobs) / length^length_penalty, candidates taken from the 2·num_beams best
// continuations of all running beams, early_stopping and the end-of-search rule as Flax has
// them. The search is pure host arithmetic over each step's logits; the scheduler runs the model
// and moves each beam's cache to follow its parent (BeamChoice::parent).
//
// Flax's rules, kept as they are (all in float32, ties to the lower index as jax.lax.top_k):
// * the processors run on the log-probabilities: end-of-text suppressed while fewer than
//   min_new_tokens were generated (Flax's min_length = prompt + min_new_tokens - 1, its test
//   being cur_len <= min_length), no_repeat_ngram_size; Flax has no logit_bias nor repetition
//   or presence/frequency penalties: ours run at the same place, on the log-probabilities;
// * length is the generated length, end-of-text included (not prompt + generated);
// * running hypotheses are never moved to the finished set at the end: where any hypothesis
//   finished, the finished set is returned, and its slots that no finished hypothesis filled
//   are Flax's placeholders (no ids, score -1e7, kLength); where none finished, the running
//   hypotheses with their raw sums of log-probabilities;
// * the search goes on while below max_new_tokens, not (early_stopping and num_beams finished),
//   and the best running score / generated^length_penalty beats the worst finished score
//   (always, while a finished slot is still a placeholder).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/generation/options.h"

namespace eagerlm {

// A running beam after a step: it continues the beam that was row `parent` of that step's
// logits with `token`.
struct BeamChoice {
  int32_t parent = 0;
  int32_t token = 0;
};

class BeamSearch {
 public:
  // options: beams (num_beams > 1), eos_id, min_new_tokens, the processors of options.sampling
  // (logit_bias, repetition penalty, no_repeat_ngram_size, ...). max_new_tokens: at most this many
  // tokens after the prompt (the caller caps it by the cache's length).
  BeamSearch(const GenerationOptions& options, int64_t prompt_len, int64_t max_new_tokens, int64_t vocab);

  // One step. logits: `rows` rows of `vocab` floats, row b the next-token logits of running beam
  // b (the first step has one row: the prompt's last token). histories[b]: beam b's tokens so
  // far, prompt included. Returns the num_beams running beams of the next step, best first (empty
  // once done()).
  std::vector<BeamChoice> step(const float* logits, int64_t rows, int64_t vocab,
                               const std::vector<const std::vector<int32_t>*>& histories);
  bool done() const;

  // The best num_return_sequences hypotheses, best first, as Flax returns them (finished ones
  // where any finished, else the running ones): generated ids (end-of-text included where it
  // ended one), score, finish_reason (kEos or kLength). text, timings and seed are left for the
  // caller. Callable at any time (a cancelled search reports what it has).
  std::vector<GenerationResult> results() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace eagerlm
