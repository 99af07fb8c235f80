// What the generation loop needs from a model: run new tokens of several sequences (each in its
// own cache slot) and return next-token logits on the host. Implemented by
// models/gpt2/gpt2_step_model.h; the loop knows nothing of GPT-2.
#pragma once

#include <cstdint>
#include <vector>

namespace eagerlm {

// One sequence's share of a step: `n_tokens` new tokens at positions past_len.. of cache slot
// `slot`. Its cache must already hold positions [0, past_len).
struct SequenceStep {
  int32_t slot = 0;
  int32_t past_len = 0;
  const int32_t* tokens = nullptr;
  int32_t n_tokens = 0;
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
};

}  // namespace eagerlm
