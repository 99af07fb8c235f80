// eagerlm::Engine: continuous batching for servers and concurrent callers. Requests are
// submitted from any thread at any time, each with its own options; a worker thread runs them
// together over one preallocated KV cache of max_batch slots: a request joins the running batch
// at the next step, its prompt is prefilled in chunks between the decode steps of the others,
// and it leaves when done. A prompt that starts with tokens still cached (from an earlier
// request) reuses them. Results are the same, bit for bit on the CPU, as generating each request
// alone (see docs/library.md, "Batch invariance").
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "error.hpp"
#include "export.h"
#include "generator.hpp"
#include "model.hpp"

namespace eagerlm {

struct EngineSettings {
  size_t max_batch = 8;        // cache slots: sequences decoded together
  size_t max_length = 0;       // tokens per slot (prompt + generated); 0: the model's context length
  // Prompt tokens per step, at most, besides the decode rows; 0: the device's choice (64 on the
  // CPU, 256 on CUDA: a chunk is a wait for every running stream, docs/library.md).
  size_t prefill_chunk = 0;
  size_t max_queue = std::numeric_limits<size_t>::max();  // waiting requests beyond it: ErrorCode::kBusy
  bool prompt_cache = true;    // reuse cached prompt prefixes
};

// Steps of one kind since the engine started: how many, the rows (tokens) they carried, and the
// model's seconds on them (host-side sampling left out).
struct StepCounts {
  uint64_t steps = 0;
  uint64_t rows = 0;
  double seconds = 0;
};

struct EngineStats {
  size_t queued = 0;       // requests waiting for slots
  size_t running = 0;      // requests holding slots
  size_t busy_slots = 0;
  size_t max_batch = 0;
  uint64_t steps = 0;
  uint64_t prefill_tokens = 0;
  uint64_t cached_tokens = 0;
  uint64_t generated_tokens = 0;
  // The steps by what they carried: decode rows only, decode rows beside a prompt chunk, prompt
  // chunks only. Decode-only steps read every weight for a few rows; prompt chunks are arithmetic.
  StepCounts decode_steps, mixed_steps, prompt_steps;
};

// One streamed token, owned (TokenEvent's strings are views into the engine).
struct StreamedToken {
  size_t sample = 0;
  int32_t token = -1;  // -1: held-back text released at the end of the result
  std::string text;
  float logprob = 0.0f;
  std::vector<TokenLogprob> top;
};

class EAGERLM_API Engine {
 public:
  class Request;

  // Allocates the cache and starts the worker thread. Throws as Generator's constructor does.
  Engine(const Model& model, const EngineSettings& settings = {});
  // Cancels whatever is still queued or running and joins the worker.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues a request; returns at once. Options are checked here (throws kInvalidArgument naming
  // the option, kBusy when the queue is full). With on_token, tokens are reported to it on the
  // worker thread (keep it short; returning false ends that result); without, they can be pulled
  // with Request::next(). An empty prompt starts from the end-of-text token.
  std::shared_ptr<Request> submit(std::string_view prompt, const GenerateOptions& options = {},
                                  OnToken on_token = {});
  std::shared_ptr<Request> submit_tokens(std::vector<int32_t> prompt, const GenerateOptions& options = {},
                                         OnToken on_token = {});

  EngineStats stats() const;
  const Model& model() const;

  // Stops accepting requests (submit throws kBusy), lets the running ones finish, waits at most
  // `timeout` for them, then cancels what is left. The destructor does the same with no wait.
  void drain(std::chrono::milliseconds timeout);

  // A submitted request: wait for its results, pull its tokens, or cancel it. Thread-safe.
  class EAGERLM_API Request {
   public:
    ~Request();
    uint64_t id() const;
    // Ends it now: results so far, finish reason kCancelled. No effect once done.
    void cancel();
    bool done() const;
    // Blocks until it is done; its results (one per sample), or throws the error that ended it.
    std::vector<Result> wait();
    // Waits up to `timeout` for the next streamed token (requests submitted without on_token);
    // nullopt when it timed out or the request is done and every token was taken.
    std::optional<StreamedToken> next(std::chrono::milliseconds timeout = std::chrono::milliseconds::max());

    struct State;
    explicit Request(std::shared_ptr<State> state);

   private:
    std::shared_ptr<State> state_;
  };

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;  // shared with the request handles, which may outlive the Engine
};

}  // namespace eagerlm
