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
  uint64_t stream = 0;  // its random stream (the request's stream base plus its sample index)
  uint64_t draw = 0;    // draws made in that stream before: tokens the sequence generated
  // How to sample it on the device; null: not on the device (its logits row is then read with
  // host_logits() after the step).
  const SamplingOptions* options = nullptr;
  bool logprobs = false;  // also log p(id) under the raw distribution
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
  // Prompt tokens a step should carry beside decode rows when the scheduler's options leave it
  // to the model (SchedulerOptions::prefill_chunk 0): what suits the device it runs on, at least
  // 1. A model with no device of its own has no reason to cut a prompt below a whole step.
  virtual int64_t prefill_chunk() const { return max_step_rows(); }
  // Logits [sequences.size(), vocab] of each sequence's last new token, row-major, on the host,
  // valid until the next call.
  virtual const float* step(const std::vector<SequenceStep>& sequences) = 0;

  // Makes slot dst hold the keys and values of positions [0, n_positions) of slot src (a
  // sequence can then continue from src's prefix in dst), before the next step runs.
  virtual void copy_prefix(int32_t src, int32_t dst, int32_t n_positions) = 0;

  // Optional: sampling where the model runs. When samples_on_device(), step_and_sample runs a
  // step like step() and picks each wanted sequence's next token, for requests with options,
  // from its last new token's logits with those options (the filters and their order as
  // Sampler's; the draws come from the model's own generator, seeded by the options' seed, the
  // stream and the draw, so they differ from Sampler's, while greedy picks are identical). The
  // repetition penalty covers every token fed to the slot since its sequence started (past_len
  // 0) or was copied in (copy_prefix), which the scheduler makes the prompt and the tokens
  // generated so far; such a sequence must be fed through step_and_sample throughout
  // (device_history() says whether it was). Returns one entry per sequence, valid until the
  // next call; host_logits() then gives the step's logits on the host for the other requests.
  virtual bool samples_on_device() const { return false; }
  virtual const SampledToken* step_and_sample(const std::vector<SequenceStep>& sequences,
                                              const std::vector<SampleRequest>& requests) {
    (void)sequences, (void)requests;
    throw_error(ErrorCode::kUnsupported, "this model does not sample on its device (samples_on_device() is false)");
  }
  // Logits [sequences.size(), vocab] of the last step_and_sample on the host (copied now).
  virtual const float* host_logits() {
    throw_error(ErrorCode::kUnsupported, "this model does not sample on its device (samples_on_device() is false)");
  }
  // Optional: scoring. When scores_targets(), step_logprobs runs a step like step() and returns,
  // on the host, log p(targets[k] | its sequence up to and including token k) for every new token
  // k of the step (in step order) whose target is not -1, in that order, under the model's raw
  // distribution; valid until the next call. targets has one id per new token. No logits are
  // returned (the model need not form them).
  virtual bool scores_targets() const { return false; }
  virtual const float* step_logprobs(const std::vector<SequenceStep>& sequences, const std::vector<int32_t>& targets) {
    (void)sequences, (void)targets;
    throw_error(ErrorCode::kUnsupported, "this model does not score targets (scores_targets() is false)");
  }
  // Tokens of slot `slot` the device's history holds (-1: unknown): the repetition penalty on
  // the device is exact for a sequence of past_len tokens only when this equals past_len.
  virtual int64_t device_history(int32_t slot) const {
    (void)slot;
    return -1;
  }
};

}  // namespace eagerlm
