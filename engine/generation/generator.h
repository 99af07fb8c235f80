// The generation loop: prefill every prompt (in chunks of at most max_step_rows tokens), then
// decode one token per live sequence per step until each one ends (end-of-text, a stop string,
// its token budget, the context length, or the callback). Finished sequences leave the batch,
// so they stop costing compute. Tokens are sampled on the host (Sampler), or on the model's
// device when the StepModel offers it (step_and_sample: only the chosen ids come back). The
// model's cache is allocated once by the StepModel; nothing here allocates per token beyond
// small host vectors.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "eagerlm/common.hpp"  // FinishReason, finish_reason_name (public API)
#include "engine/generation/sampling.h"
#include "engine/generation/step_model.h"
#include "engine/tokenizer/tokenizer.h"

namespace eagerlm {

struct GenerationOptions {
  int32_t max_new_tokens = 128;
  SamplingOptions sampling;         // greedy by default
  std::vector<std::string> stop;    // stop strings (the text is cut before them)
  bool ignore_eos = false;          // keep going after <|endoftext|>
  bool logprobs = false;            // record log p(token) under the model's distribution
  int32_t eos_id = 50256;

  void validate() const;  // throws Error(kInvalidArgument) naming the option
};

struct GenerationResult {
  std::vector<int32_t> ids;    // generated ids only (an end-of-text id included when it ended it)
  std::string text;            // their text, cut before a stop string; end-of-text not rendered
  FinishReason finish_reason = FinishReason::kLength;
  std::vector<float> logprobs; // one per id when asked for
};

struct GenerationTimings {
  double prefill_ms = 0;          // all prompts through the model
  double first_token_ms = 0;      // from generate() to the first sampled token
  double decode_ms_per_token = 0; // mean time of one decode step
  double total_ms = 0;
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  int64_t decode_steps = 0;
  double tokens_per_second() const { return total_ms > 0 ? double(generated_tokens) * 1000.0 / total_ms : 0; }
};

// Called for each generated token of sequence `index` with the text it makes visible (possibly
// empty: held back until a UTF-8 character or a possible stop string completes). Returning
// false ends that sequence with FinishReason::kCallback.
using TokenCallback = std::function<bool(size_t index, int32_t token, const std::string& text)>;

// (Named GenerationLoop so as not to clash with the public eagerlm::Generator, which wraps it.)
class GenerationLoop {
 public:
  GenerationLoop(StepModel& model, const Tokenizer& tokenizer) : model_(model), tokenizer_(tokenizer) {}

  // prompts: token ids, each non-empty and at most the model's max_len long; at most
  // max_slots prompts. Results are in prompt order.
  std::vector<GenerationResult> generate(const std::vector<std::vector<int32_t>>& prompts,
                                         const GenerationOptions& options,
                                         const TokenCallback& on_token = {});
  const GenerationTimings& timings() const { return timings_; }

 private:
  StepModel& model_;
  const Tokenizer& tokenizer_;
  GenerationTimings timings_;
};

}  // namespace eagerlm
