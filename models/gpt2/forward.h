// The GPT-2 forward pass, written once against engine/ops (CPU or CUDA). One step runs new
// tokens of several sequences through every layer: prefill (a whole prompt) and decode (one
// token per sequence) are the same code with different row counts. Keys and values go into the
// KV cache; attention reads the cache. Activations come from an arena planned once at
// construction from (max_step_rows, max_slots), so a step allocates nothing.
//
// A step's inputs (ids, positions, batch metadata) reach the device in one staged copy (on CUDA:
// asynchronous, from pinned memory). Where the backend records step graphs (CUDA), decode steps
// (one new token per sequence) are replayed as graphs, one per batch size: every shape is fixed
// by the batch size alone (the cache is preallocated, and positions and lengths are read from
// device memory), so the first decode step at a batch size runs eagerly (warming up cuBLAS), the
// second is recorded, and later ones only upload their inputs and launch the graph.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "engine/core/arena.h"
#include "engine/generation/step_model.h"
#include "engine/generation/step_packer.h"
#include "engine/ops/exec_context.h"
#include "models/gpt2/kv_cache.h"
#include "models/gpt2/model.h"

namespace eagerlm::gpt2 {

enum class LogitsFor {
  kLastToken,  // one row per sequence: its last new token (generation)
  kAllTokens,  // one row per new token (tests, scoring)
};

struct ForwardLimits {
  int64_t max_slots = 1;                     // sequences in the cache
  int64_t max_len = 0;                       // positions per sequence (0: n_positions)
  int64_t max_step_rows = kDefaultStepRows;  // tokens in one step (longer prompts go in chunks)
  bool all_logits = false;                   // plan for LogitsFor::kAllTokens
  bool target_logprobs = false;              // plan for step_logprobs (no [max_step_rows, vocab] logits)
  bool graphs = true;                        // replay decode steps as graphs where the backend has them (CUDA)
  std::optional<DType> kv_type;              // the KV cache's type (F32, BF16, F16); nullopt: the model's
};

class ForwardPass {
 public:
  ForwardPass(std::shared_ptr<const Model> model, const ForwardLimits& limits);

  // Runs one step; returns logits [rows, vocab] on the model's device, valid until the next step
  // (the work may still be queued on the device: reading the logits, e.g. with device_copy, waits).
  // Throws kInvalidArgument when a token id, position, slot or row count is out of range.
  Tensor step(const std::vector<SequenceStep>& sequences, LogitsFor which);

  // Runs one step and scores it: for every row of the step (the new tokens, in step order) whose
  // target is not -1, log p(target | its sequence up to and including that token) under the
  // model's distribution, in row order: F32 [scored rows] on the model's device, valid until the
  // next step (empty when nothing is scored: the step only fills the cache). targets has one id
  // per row; a sequence's last new token needs the id that follows it, which may be the first of
  // its next chunk, so the caller supplies them. The final norm and the output head run on the
  // scored rows only, fused with the log-softmax (ops::target_logprobs): no logits are formed.
  // Needs limits.target_logprobs; never replayed as a graph. Throws kInvalidArgument as step()
  // does, and for a target outside the vocabulary or a targets count other than the rows'.
  Tensor step_logprobs(const std::vector<SequenceStep>& sequences, const std::vector<int32_t>& targets);

  // Copies cached positions [0, n_positions) of slot src to slot dst (every layer), queued
  // before the next step. Throws kInvalidArgument for slots or a length out of range.
  void copy_prefix(int32_t src, int32_t dst, int32_t n_positions);

  const Model& model() const { return *model_; }
  const ForwardLimits& limits() const { return limits_; }
  const ExecContext& context() const { return ctx_; }
  size_t arena_bytes() const { return arena_.capacity(); }
  size_t cache_bytes() const { return cache_.bytes(); }
  // Steps run as graph replays so far (the step that recorded a graph included).
  int64_t graph_replays() const { return graph_replays_; }

 private:
  // One decode batch size: how many steps of it ran, and its graph once recorded.
  struct DecodeGraph {
    int64_t steps = 0;
    std::unique_ptr<StepGraph> graph;
  };

  void check_step(const std::vector<SequenceStep>& sequences) const;
  // Packs ids, positions and batch metadata into step_inputs_ (through staging_), and the
  // n_targets ids of `targets` when given; returns the step's row count.
  int32_t stage_inputs(const std::vector<SequenceStep>& sequences, const int32_t* targets = nullptr,
                       int64_t n_targets = 0);
  // The step's batch metadata, as staged (device pointers into batch_meta_).
  StepBatch staged_batch(int32_t n_seq, int32_t rows) const;
  // The graph slot of a step that can be replayed (a decode step, graphs on and supported), or null.
  DecodeGraph* decode_graph(const std::vector<SequenceStep>& sequences);
  // Queues the whole model over the staged inputs; returns the logits.
  Tensor run_model(const std::vector<SequenceStep>& sequences, int32_t rows, const StepBatch& batch, LogitsFor which);
  // Embedding and every block over the staged inputs: x_ holds the step's final hidden states.
  void run_layers(int32_t rows, const StepBatch& batch);
  void run_block(const BlockWeights& w, int64_t layer, int64_t rows, const StepBatch& batch);

  std::shared_ptr<const Model> model_;
  ForwardLimits limits_;
  ExecContext ctx_;
  KvCache cache_;
  Arena arena_;
  // Arena tensors, sized for max_step_rows (views of them are taken per step). The I32 inputs
  // are views of one block, [batch_meta | ids | positions | targets], so that they upload in one
  // copy (targets only for step_logprobs).
  Tensor step_inputs_, batch_meta_, ids_, positions_, targets_;
  Tensor x_, h_, qkv_, attn_, mlp_, last_, logits_;
  Tensor logprobs_;  // [max_step_rows], with limits.target_logprobs
  // The host twin of step_inputs_, and the graphs indexed by batch size (empty without graphs).
  std::unique_ptr<Staging> staging_;
  std::vector<DecodeGraph> decode_graphs_;
  int64_t graph_replays_ = 0;
};

}  // namespace eagerlm::gpt2
