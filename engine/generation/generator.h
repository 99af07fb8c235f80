// The batch generation loop: a fixed set of prompts generated together to the end, over the
// continuous-batching scheduler (scheduler.h), so that batch calls, the CLI and the engine share
// one path. Prompt i's samples draw from random streams i·n + sample, as they always have.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/generation/options.h"
#include "engine/generation/scheduler.h"
#include "engine/generation/step_model.h"
#include "engine/tokenizer/tokenizer.h"

namespace eagerlm {

struct GenerationTimings {
  double prefill_ms = 0;           // from generate() until every prompt was through the model
  double first_token_ms = 0;       // from generate() to the first generated token
  double decode_ms_per_token = 0;  // mean time of one step once every prompt was prefilled
  double total_ms = 0;
  int64_t prompt_tokens = 0;
  int64_t cached_prompt_tokens = 0;
  int64_t generated_tokens = 0;
  int64_t decode_steps = 0;
  double tokens_per_second() const { return total_ms > 0 ? double(generated_tokens) * 1000.0 / total_ms : 0; }
};

// Called for each generated token of prompt `prompt` (event.sample says which of its results);
// returning false ends that result with FinishReason::kCallback.
using TokenCallback = std::function<bool(size_t prompt, const StreamEvent& event)>;

// (Named GenerationLoop so as not to clash with the public eagerlm::Generator, which wraps it.)
class GenerationLoop {
 public:
  GenerationLoop(StepModel& model, const Tokenizer& tokenizer, const SchedulerOptions& options = {})
      : model_(model), tokenizer_(tokenizer), options_(options) {}

  // prompts: token ids, each non-empty and at most the model's max_len long; any number (those
  // beyond the cache's slots wait for one). Results: options.result_count() per prompt, in
  // prompt order, each prompt's in sample order. An unset seed is drawn once for the call.
  // An exception from the callback ends the call (after the step it was thrown in).
  std::vector<GenerationResult> generate(const std::vector<std::vector<int32_t>>& prompts,
                                         const GenerationOptions& options, const TokenCallback& on_token = {});
  const GenerationTimings& timings() const { return timings_; }

 private:
  StepModel& model_;
  Tokenizer tokenizer_;
  SchedulerOptions options_;
  GenerationTimings timings_;
};

}  // namespace eagerlm
