// What the generation loop needs from a model: run new tokens of several sequences (each in its
// own cache slot) and return next-token logits on the host, or (where the model can) sample the
// next tokens where the logits are and return only those. Implemented by
// models/gpt2/gpt2_step_model.h; the loop knows nothing of GPT-2.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/error.h"
#include "engine/generation/sampling.h"

namespace eagerlm {

// One sequence's share of a step: `n_tokens` new tokens at positions past_len.. of cache slot
// `slot`. Its cache must already hold positions [0, past_len).
struct SequenceStep {
  int32_t slot = 0;
  int32_t past_len = 0;
  const int32_t* tokens = nullptr;
  int32_t n_tokens = 0;
};

// Per sequence of a step_and_sample call.
struct SampleRequest {
  bool wanted = true;   // false: only feed the tokens (a prompt chunk that is not the last)
  uint64_t stream = 0;  // its random stream: the sequence's index, as for Sampler
  uint64_t draw = 0;    // draws made in that stream before: tokens the sequence generated
};

struct SampledToken {
  int32_t id = -1;       // -1 where not wanted
  float logprob = 0.0f;  // log p(id) under the model's raw distribution, when asked for
};

class StepModel {
 public:
  virtual ~StepModel() = default;
  virtual int64_t vocab_size() const = 0;
  virtual int64_t max_slots() const = 0;      // sequences the cache holds
  virtual int64_t max_len() const = 0;        // positions per sequence
  virtual int64_t max_step_rows() const = 0;  // tokens one step may carry
  // Logits [sequences.size(), vocab] of each sequence's last new token, row-major, on the host,
  // valid until the next call.
  virtual const float* step(const std::vector<SequenceStep>& sequences) = 0;

  // Optional: sampling where the model runs. When samples_on_device(), step_and_sample runs a
  // step like step() and picks each wanted sequence's next token from its last new token's
  // logits with `options` (the filters and their order as Sampler; the draws come from the
  // model's own generator, seeded by options.seed, stream and draw, so they differ from
  // Sampler's, while greedy picks are identical). The repetition penalty covers every token fed
  // to the slot since its sequence started (past_len 0), which the generation loop makes the
  // prompt and the tokens generated so far; a sequence sampled this way must be fed through
  // step_and_sample from its start. Returns one entry per sequence, valid until the next call.
  virtual bool samples_on_device() const { return false; }
  virtual const SampledToken* step_and_sample(const std::vector<SequenceStep>& sequences,
                                              const std::vector<SampleRequest>& requests,
                                              const SamplingOptions& options, bool logprobs) {
    (void)sequences, (void)requests, (void)options, (void)logprobs;
    throw_error(ErrorCode::kUnsupported, "this model does not sample on its device (samples_on_device() is false)");
  }
};

}  // namespace eagerlm
