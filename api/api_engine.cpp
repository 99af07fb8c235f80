// eagerlm::Engine: the engine's AsyncEngine (the scheduler on a worker thread) over a
// Gpt2StepModel, with prompts encoded, options translated and results converted at the boundary,
// exactly as Generator does for its synchronous calls.
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>

#include "api/library_internal.h"
#include "eagerlm/engine.hpp"
#include "engine/generation/async_engine.h"
#include "engine/generation/prompts.h"
#include "models/gpt2/gpt2_step_model.h"

namespace eagerlm {

struct Engine::Impl {
  Impl(const Model& m, const gpt2::ForwardLimits& limits, const SchedulerOptions& options)
      : model(m), step(m.impl_->model, limits), engine(step, m.impl_->tokenizer, options, [] {
          library::apply_cpu_threads();
        }) {}
  Model model;  // keeps the weights and tokenizer alive
  gpt2::Gpt2StepModel step;
  EngineSettings settings;
  AsyncEngine engine;  // last: its worker stops before the model it drives goes
};

// What a submitted request's handle shares with the engine's worker.
struct Engine::Request::State {
  std::weak_ptr<Engine::Impl> engine;
  Ticket ticket = 0;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<StreamedToken> tokens;  // when pulled with next()
  std::vector<Result> results;
  std::exception_ptr error;
  bool done = false;
};

namespace {

gpt2::ForwardLimits limits_for(const gpt2::Config& c, const EngineSettings& s) {
  if (s.max_batch < 1 || s.max_batch > size_t(std::numeric_limits<int32_t>::max()))
    throw Error(ErrorCode::kInvalidArgument, "max_batch must be in [1, 2^31), got " + std::to_string(s.max_batch));
  if (s.max_length > size_t(c.n_positions))
    throw Error(ErrorCode::kInvalidArgument, "max_length " + std::to_string(s.max_length) +
                                                 " exceeds the model's context length " + std::to_string(c.n_positions));
  if (s.prefill_chunk > size_t(std::numeric_limits<int32_t>::max()))
    throw Error(ErrorCode::kInvalidArgument,
                "prefill_chunk must be below 2^31 (0: the device's), got " + std::to_string(s.prefill_chunk));
  gpt2::ForwardLimits limits;
  limits.max_slots = int64_t(s.max_batch);
  limits.max_len = s.max_length == 0 ? c.n_positions : int64_t(s.max_length);
  return limits;
}

SchedulerOptions scheduler_options(const EngineSettings& s) {
  SchedulerOptions o;
  o.prefill_chunk = int64_t(s.prefill_chunk);
  o.max_queue = s.max_queue;
  o.prompt_cache = s.prompt_cache;
  return o;
}

}  // namespace

Engine::Engine(const Model& model, const EngineSettings& settings) {
  impl_ = library::translate_errors([&] {
    auto impl = std::make_shared<Impl>(model, limits_for(model.impl_->model->config(), settings),
                                       scheduler_options(settings));
    impl->settings = settings;
    return impl;
  });
}

Engine::~Engine() = default;

std::shared_ptr<Engine::Request> Engine::submit(std::string_view prompt, const GenerateOptions& options,
                                                OnToken on_token) {
  const Model::Impl& m = *impl_->model.impl_;
  std::vector<std::vector<int32_t>> ids = library::translate_errors([&] {
    return encode_prompts(m.tokenizer, {std::string(prompt)}, EncodeOptions{}, int32_t(m.model->config().eos_token_id));
  });
  return submit_tokens(std::move(ids[0]), options, std::move(on_token));
}

std::shared_ptr<Engine::Request> Engine::submit_tokens(std::vector<int32_t> prompt, const GenerateOptions& options,
                                                       OnToken on_token) {
  return library::translate_errors([&] {
    const Model::Impl& m = *impl_->model.impl_;
    eagerlm::Request r;
    r.prompt = std::move(prompt);
    r.options = library::to_generation_options(options, int32_t(m.model->config().eos_token_id));
    r.options.sampling.vocab_limit = gpt2::sampling_vocab(m.model->config(), m.tokenizer);
    auto state = std::make_shared<Request::State>();
    state->engine = impl_;
    std::weak_ptr<Request::State> weak = state;
    if (on_token) {
      r.on_token = [on_token = std::move(on_token)](const StreamEvent& e) {
        return on_token(library::to_token_event(0, e));
      };
    } else {
      r.on_token = [weak](const StreamEvent& e) {
        const auto s = weak.lock();
        if (!s) return false;  // no one will read it: stop
        StreamedToken t;
        t.sample = size_t(e.sample);
        t.token = e.token;
        t.text = std::string(e.text);
        t.logprob = e.logprob;
        if (e.top) t.top = *e.top;
        {
          std::lock_guard<std::mutex> lock(s->mutex);
          s->tokens.push_back(std::move(t));
        }
        s->changed.notify_all();
        return true;
      };
    }
    r.on_done = [weak](RequestOutcome&& out) {
      const auto s = weak.lock();
      if (!s) return;
      {
        std::lock_guard<std::mutex> lock(s->mutex);
        s->error = out.error;
        for (GenerationResult& g : out.results) s->results.push_back(library::to_result(std::move(g), 0));
        s->done = true;
      }
      s->changed.notify_all();
    };
    state->ticket = impl_->engine.submit(std::move(r));
    return std::make_shared<Request>(state);
  });
}

EngineStats Engine::stats() const {
  const SchedulerStats s = impl_->engine.stats();
  EngineStats out;
  out.queued = size_t(s.queued);
  out.running = size_t(s.running);
  out.busy_slots = size_t(s.busy_slots);
  out.max_batch = impl_->settings.max_batch;
  out.steps = uint64_t(s.steps);
  out.prefill_tokens = uint64_t(s.prefill_tokens);
  out.cached_tokens = uint64_t(s.cached_tokens);
  out.generated_tokens = uint64_t(s.decode_tokens);
  auto counts = [](const StepKindStats& k) { return StepCounts{uint64_t(k.steps), uint64_t(k.rows), k.model_ms / 1e3}; };
  out.decode_steps = counts(s.decode_only);
  out.mixed_steps = counts(s.mixed);
  out.prompt_steps = counts(s.prompt_only);
  return out;
}

const Model& Engine::model() const { return impl_->model; }

void Engine::drain(std::chrono::milliseconds timeout) { impl_->engine.drain(timeout); }

// ---- Request handles.

Engine::Request::Request(std::shared_ptr<State> state) : state_(std::move(state)) {}
Engine::Request::~Request() = default;

uint64_t Engine::Request::id() const { return state_->ticket; }

void Engine::Request::cancel() {
  if (const auto engine = state_->engine.lock()) engine->engine.cancel(state_->ticket);
}

bool Engine::Request::done() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->done;
}

std::vector<Result> Engine::Request::wait() {
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->changed.wait(lock, [&] { return state_->done; });
  if (state_->error) std::rethrow_exception(state_->error);
  return state_->results;
}

std::optional<StreamedToken> Engine::Request::next(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(state_->mutex);
  const auto ready = [&] { return !state_->tokens.empty() || state_->done; };
  if (timeout == std::chrono::milliseconds::max()) {
    state_->changed.wait(lock, ready);
  } else if (!state_->changed.wait_for(lock, timeout, ready)) {
    return std::nullopt;
  }
  if (state_->tokens.empty()) return std::nullopt;
  StreamedToken t = std::move(state_->tokens.front());
  state_->tokens.pop_front();
  return t;
}

}  // namespace eagerlm
