// Scoring: log p(ids[i] | ids[<i]) for given token sequences, under a StepModel that scores
// targets (scores_targets()). Each sequence gets a cache slot of its own; its tokens but the last
// are fed through the step packer (chunked and batched like any prompt), and each fed token's
// target is the token after it, so a chunk's last token is scored against the first token of the
// next chunk. Sequences beyond the model's slots go in later groups. The API's Model::score and
// `eagerlm perplexity` both score here.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "engine/generation/step_model.h"

namespace eagerlm {

struct ScoreRequest {
  const int32_t* ids = nullptr;  // the sequence; must stay valid while scoring
  int32_t count = 0;             // its tokens, at least 1
  // ids[first, count) are scored; the tokens before only serve as context. At least 1: the first
  // token has nothing to be predicted from.
  int32_t first = 1;
};

// Called after each step with the tokens fed so far and in all.
using ScoreProgress = std::function<void(int64_t fed, int64_t total)>;

// Throws Error(kInvalidArgument) naming "sequence i" (counted from 0) for an empty sequence, a
// `first` outside [1, count] (count itself: nothing scored), more tokens than max_len + 1 (the
// last token is never fed), or an id outside [0, vocab_size).
void check_score_requests(const std::vector<ScoreRequest>& requests, int64_t vocab_size, int64_t max_len);

// The cache slots a model should have to score `requests` in steps of step_rows tokens: enough
// sequences in flight to fill a step, never more than there are requests (at least 1).
int64_t scoring_slots(const std::vector<ScoreRequest>& requests, int64_t step_rows);

// log p(ids[k] | ids[<k]) for k in [first, count) of every request, in order (result[i] has
// count - first values). Checks the requests first (check_score_requests against the model's
// vocabulary and max_len); throws Error(kUnsupported) when !model.scores_targets().
std::vector<std::vector<float>> score_sequences(StepModel& model, const std::vector<ScoreRequest>& requests,
                                                const ScoreProgress& progress = {});

}  // namespace eagerlm
