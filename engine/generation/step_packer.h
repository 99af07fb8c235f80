// Chunked prefill: the tokens several sequences still have to feed, packed into steps of at most
// max_rows tokens. Sequences are visited in the order they were added; each contributes its next
// contiguous chunk to a step until the step is full, and continues in the next step where it
// stopped. Every front end that feeds whole prompts through a model (generation, logits, the
// conformance dump, the benchmark) packs its steps here, so prompts of any length and number go
// through the same steps everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/generation/step_model.h"

namespace eagerlm {

// Tokens one step carries by default: enough to keep the GEMMs efficient, few enough that the
// activations of a step stay small (a 1,024-token GPT-2 prompt takes two steps).
constexpr int64_t kDefaultStepRows = 512;

class StepPacker {
 public:
  explicit StepPacker(int64_t max_rows);

  // Adds a sequence: tokens[0, count) go into cache slot `slot` at positions start.., fed in
  // order. Returns its index among the added sequences. tokens must stay valid while packing.
  size_t add(int32_t slot, const int32_t* tokens, int32_t count, int32_t start = 0);

  // The next step (empty once everything is fed); the tokens it takes count as fed.
  const std::vector<SequenceStep>& next();
  // For each entry of the last next(): the index of its sequence, and whether the chunk is that
  // sequence's last (its prompt is then complete).
  const std::vector<size_t>& sequences() const { return which_; }
  bool completes(size_t k) const { return completes_[k] != 0; }
  bool done() const { return next_pending_ == pending_.size(); }

 private:
  struct Pending {
    int32_t slot, start, count, fed;
    const int32_t* tokens;
  };
  int64_t max_rows_;
  std::vector<Pending> pending_;
  size_t next_pending_ = 0;  // sequences before it are fully fed
  std::vector<SequenceStep> step_;
  std::vector<size_t> which_;
  std::vector<char> completes_;
};

}  // namespace eagerlm
