// Perplexity of a token sequence by the sliding-window method of Hugging Face's perplexity guide
// (https://huggingface.co/docs/transformers/perplexity): windows of `window` tokens starting every
// `stride` tokens, [begin, min(begin + window, n)), the last one being the first to reach the
// end. Each window is scored as a fresh sequence (nothing cached is shared between windows), and
// only its tokens past the previous window's end count: all but the first of the first window,
// then the last end - previous_end of each, less the window's first token, which has nothing
// before it in the window (it is scored only when stride = window: windows do not overlap). So
// with stride < window every token but the first is scored exactly once, with at least
// window - stride tokens of context where the text has them; a text that fits one window is
// scored with its whole prefix.
//
// The result is exp(Σ -log p / tokens) over those tokens, each log p from its window. (The
// guide's code weights each later window's mean loss by end - previous_end - 1 while that mean
// is over end - previous_end tokens; summing every token's log-probability once, as here, is the
// quantity the guide defines.)
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/generation/scoring.h"
#include "engine/generation/step_model.h"

namespace eagerlm {

struct PerplexityResult {
  int64_t tokens = 0;   // tokens scored (all but the first when windows overlap)
  int64_t windows = 0;  // forward passes over a window
  int64_t fed = 0;      // tokens fed through the model, windows overlapping
  double nll = 0;       // Σ -log p over the scored tokens, in nats
  // log p(ids[i] | the tokens before it in its window) for each scored position i, ascending.
  std::vector<float> logprobs;
  std::vector<int64_t> positions;

  double mean_nll() const { return tokens > 0 ? nll / double(tokens) : 0.0; }
  double perplexity() const { return std::exp(mean_nll()); }
};

// Throws OptionError naming "window" (at least 2 tokens) or "stride" (1 to window).
void check_perplexity_window(int64_t window, int64_t stride);

// The windows as score requests over `ids` (which must outlive them). Throws as
// check_perplexity_window, and Error(kInvalidArgument) for fewer than 2 tokens.
std::vector<ScoreRequest> perplexity_windows(const std::vector<int32_t>& ids, int64_t window, int64_t stride);

// Scores the windows on `model` (which scores targets and holds windows of window - 1 fed tokens)
// and sums them up; progress as score_sequences reports it.
PerplexityResult perplexity(StepModel& model, const std::vector<int32_t>& ids, int64_t window, int64_t stride,
                            const ScoreProgress& progress = {});

}  // namespace eagerlm
