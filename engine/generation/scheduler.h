// Continuous batching over a StepModel's cache slots. Requests are submitted at any time, each
// with its own options; at every step the scheduler
//   1. admits queued requests (first come, first served) into free slots, reusing the longest
//      cached prefix of the prompt found in any slot (the prompt cache);
//   2. packs one step: one token of every decoding sequence, then prompt chunks of sequences
//      still prefilling, at most prefill_chunk prompt tokens per step, so that a long prompt
//      delays running streams by at most one chunk per step;
//   3. samples each finished row with its request's own options and random stream, applies the
//      stopping rules, and reports tokens and results through the request's callbacks.
// A request of n samples prefills its prompt once; the other samples copy its keys and values.
// Beam search runs as a group of num_beams sequences whose caches are reordered by copying.
//
// Not thread-safe: one thread calls submit/cancel/step (async_engine.h puts it on a worker
// thread behind a thread-safe interface). Callbacks run on that thread, inside step().
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <string_view>
#include <vector>

#include "engine/generation/options.h"
#include "engine/generation/step_model.h"
#include "engine/tokenizer/tokenizer.h"

namespace eagerlm {

using RequestId = uint64_t;

struct SchedulerOptions {
  // Prompt tokens one step carries at most, besides the decode rows; 0: the model's choice for
  // its device (StepModel::prefill_chunk: 64 on the CPU, 256 on CUDA).
  int64_t prefill_chunk = 0;
  // Requests waiting for a slot beyond this are refused at submit (ErrorCode::kBusy).
  size_t max_queue = std::numeric_limits<size_t>::max();
  bool prompt_cache = true;  // reuse cached prefixes of earlier prompts
};

// One generated token of one of a request's results (sample), as it streams.
struct StreamEvent {
  RequestId request = 0;
  int32_t sample = 0;     // which result (sample index; beams stream nothing until they end)
  int32_t token = -1;     // -1: the held-back text released when the sample ends
  std::string_view text;  // the text it makes visible (may be empty)
  float logprob = 0.0f;   // when the request asked for logprobs
  const std::vector<TokenLogprob>* top = nullptr;  // when it asked for top_logprobs
};

// Called with each token; returning false ends that sample (FinishReason::kCallback).
using StreamCallback = std::function<bool(const StreamEvent&)>;

// How a request ended: its results (one per sample, in sample order), or the error that ended
// it (results then hold what was generated so far).
struct RequestOutcome {
  RequestId request = 0;
  std::vector<GenerationResult> results;
  std::exception_ptr error;
};
using DoneCallback = std::function<void(RequestOutcome&&)>;

struct Request {
  std::vector<int32_t> prompt;  // token ids, non-empty, shorter than the model's max_len
  GenerationOptions options;    // options.sampling.seed unset: drawn at submit (resolve_seed)
  // Random stream of sample s: stream_base + s. Submitting requests alone leaves it 0, so a
  // request's ids never depend on others; the batch API passes prompt index · n, as it always has.
  uint64_t stream_base = 0;
  StreamCallback on_token;
  DoneCallback on_done;
};

// Steps of one kind: how many, the rows they carried, and the time the model took on them (with
// sampling where the device samples; host sampling left out). Each later sample of an n > 1
// request feeds its prompt's last token as a prompt row, as prefill_tokens counts it.
struct StepKindStats {
  int64_t steps = 0;
  int64_t rows = 0;
  double model_ms = 0;
};

struct SchedulerStats {
  int64_t steps = 0;
  // The steps by what they carried: decode rows only, prompt chunks only, or both. Where a
  // multi-slot run's time goes: decode-only steps read every weight for a few rows, prompt chunks
  // are arithmetic (bench --requests prints them).
  StepKindStats decode_only, prompt_only, mixed;
  int64_t prefill_tokens = 0;   // prompt tokens run through the model
  int64_t cached_tokens = 0;    // prompt tokens reused from the cache instead
  int64_t decode_tokens = 0;    // generated tokens
  int64_t queued = 0;           // requests waiting now
  int64_t running = 0;          // requests holding slots now
  int64_t busy_slots = 0;
};

class Scheduler {
 public:
  Scheduler(StepModel& model, const Tokenizer& tokenizer, const SchedulerOptions& options = {});
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Throws as submit() does for a request `model` cannot run (options, prompt, slots needed);
  // touches nothing but the model's limits, so any thread may call it.
  static void check(const Request& request, const StepModel& model);

  // Validates the request (throws OptionError / Error(kInvalidArgument) naming what is wrong,
  // Error(kBusy) when the queue is full) and queues it. A request needing more slots
  // than the model has is refused here.
  RequestId submit(Request request);
  // Ends a queued or running request now: its on_done gets what it generated so far, with
  // FinishReason::kCancelled; its slots are free for the next step. False if it is unknown
  // (already done).
  bool cancel(RequestId id);
  // Runs one step (admission, one model call, sampling, callbacks). Returns false, doing
  // nothing, when no request is queued or running. An error from the model ends every request
  // of that step with the error; the scheduler stays usable.
  bool step();
  // Steps until no request is left.
  void run_until_idle();
  bool idle() const;

  SchedulerStats stats() const;
  const SchedulerOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace eagerlm
