// The GPT-2 forward pass, written once against engine/ops (CPU or CUDA). One step runs new
// tokens of several sequences through every layer: prefill (a whole prompt) and decode (one
// token per sequence) are the same code with different row counts. Keys and values go into the
// KV cache; attention reads the cache. Activations come from an arena planned once at
// construction from (max_step_rows, max_slots), so a step allocates nothing.
//
// On CUDA, a step's inputs (ids, positions, batch metadata) go up in one asynchronous copy from
// pinned memory, and decode steps (one new token per sequence) are replayed as CUDA graphs, one
// per batch size: every shape is fixed by the batch size alone (the cache is preallocated, and
// positions and lengths are read from device memory), so the first decode step at a batch size
// runs eagerly (warming up cuBLAS), the second is captured, and later ones only upload their
// inputs and launch the graph.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/core/arena.h"
#include "engine/generation/step_model.h"
#include "engine/ops/exec_context.h"
#include "kernels/cuda/cuda_graph.h"
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
  bool cuda_graphs = true;      // replay CUDA decode steps as graphs (no effect on the CPU)
  GemmMath gemm_math = GemmMath::kFp32;  // TF32/BF16 tensor-core GEMMs: CUDA only
};

class ForwardPass {
 public:
  ForwardPass(std::shared_ptr<const Model> model, const ForwardLimits& limits);

  // Runs one step; returns logits [rows, vocab] on the model's device, valid until the next step
  // (on CUDA the work may still be queued: reading the logits, e.g. with device_copy, waits).
  // Throws kInvalidArgument when a token id, position, slot or row count is out of range.
  Tensor step(const std::vector<SequenceStep>& sequences, LogitsFor which);

  const Model& model() const { return *model_; }
  const ForwardLimits& limits() const { return limits_; }
  const ExecContext& context() const { return ctx_; }
  size_t arena_bytes() const { return arena_.capacity(); }
  size_t cache_bytes() const { return cache_.bytes(); }
  // Steps run as CUDA graph replays so far (the step that captured a graph included).
  int64_t graph_replays() const { return graph_replays_; }

 private:
  // One decode batch size: how many steps of it ran, and its graph once captured.
  struct DecodeGraph {
    int64_t steps = 0;
    cuda::CudaGraph graph;
  };

  void check_step(const std::vector<SequenceStep>& sequences) const;
  // Packs ids, positions and batch metadata into step_inputs_ (via the pinned staging buffer on
  // CUDA); returns the step's row count.
  int32_t stage_inputs(const std::vector<SequenceStep>& sequences);
  // The graph slot of a step that can be replayed (a CUDA decode step with graphs on), or null.
  DecodeGraph* decode_graph(const std::vector<SequenceStep>& sequences);
  // Queues the whole model over the staged inputs; returns the logits.
  Tensor run_model(const std::vector<SequenceStep>& sequences, int32_t rows, const StepBatch& batch,
                   LogitsFor which);
  void run_block(const BlockWeights& w, int64_t layer, int64_t rows, const StepBatch& batch);

  std::shared_ptr<const Model> model_;
  ForwardLimits limits_;
  ExecContext ctx_;
  KvCache cache_;
  Arena arena_;
  // Arena tensors, sized for max_step_rows (views of them are taken per step). The I32 inputs
  // are views of one block, [batch_meta | ids | positions], so that they upload in one copy.
  Tensor step_inputs_, batch_meta_, ids_, positions_;
  Tensor x_, h_, qkv_, attn_, mlp_, last_, logits_;
  // CUDA only: the pinned twin of step_inputs_, and the graphs indexed by batch size.
  cuda::StagingBuffer staging_;
  std::vector<DecodeGraph> decode_graphs_;
  int64_t graph_replays_ = 0;
};

}  // namespace eagerlm::gpt2
