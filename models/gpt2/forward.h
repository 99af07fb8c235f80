// The GPT-2 forward pass, written once against engine/ops (CPU or CUDA). One step runs new
// tokens of several sequences through every layer: prefill (a whole prompt) and decode (one
// token per sequence) are the same code with different row counts. Keys and values go into the
// KV cache; attention reads the cache. Activations come from an arena planned once at
// construction from (max_step_rows, max_slots), so a step allocates nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/core/arena.h"
#include "engine/generation/step_model.h"
#include "engine/ops/exec_context.h"
#include "models/gpt2/kv_cache.h"
#include "models/gpt2/model.h"

namespace eagerlm::gpt2 {

enum class LogitsFor {
  kLastToken,  // one row per sequence: its last new token (generation)
  kAllTokens,  // one row per new token (tests, scoring)
};

struct ForwardLimits {
  int64_t max_slots = 1;        // sequences in the cache
  int64_t max_len = 0;          // positions per sequence (0: n_positions)
  int64_t max_step_rows = 512;  // tokens in one step (longer prompts are fed in chunks)
  bool all_logits = false;      // plan for LogitsFor::kAllTokens
};

class ForwardPass {
 public:
  ForwardPass(std::shared_ptr<const Model> model, const ForwardLimits& limits);

  // Runs one step; returns logits [rows, vocab] on the model's device, valid until the next step.
  // Throws kInvalidArgument when a token id, position, slot or row count is out of range.
  Tensor step(const std::vector<SequenceStep>& sequences, LogitsFor which);

  const Model& model() const { return *model_; }
  const ForwardLimits& limits() const { return limits_; }
  const ExecContext& context() const { return ctx_; }
  size_t arena_bytes() const { return arena_.capacity(); }
  size_t cache_bytes() const { return cache_.bytes(); }

 private:
  void check_step(const std::vector<SequenceStep>& sequences) const;
  Tensor upload_i32(const std::vector<int32_t>& host, Tensor& device_buf);
  void run_block(const BlockWeights& w, int64_t layer, int64_t rows, const StepBatch& batch);

  std::shared_ptr<const Model> model_;
  ForwardLimits limits_;
  ExecContext ctx_;
  KvCache cache_;
  Arena arena_;
  // Arena tensors, sized for max_step_rows (views of them are taken per step).
  Tensor ids_, positions_, batch_meta_;  // I32
  Tensor x_, h_, qkv_, attn_, mlp_, last_, logits_;
};

}  // namespace eagerlm::gpt2
