// The C API's continuous batching: engines and request handles over eagerlm::Engine.
#include <chrono>
#include <limits>
#include <string>

#include "api/c_api_support.h"

using eagerlm::capi::fail;
using eagerlm::capi::guarded;
using eagerlm::capi::require;

namespace {

const eagerlm::GenerateOptions& options_or_default(const eagerlm_options* options) {
  static const eagerlm::GenerateOptions defaults;
  return options ? options->options : defaults;
}

eagerlm_request* wrap(std::shared_ptr<eagerlm::Engine::Request> r) { return new eagerlm_request{std::move(r), {}}; }

}  // namespace

extern "C" {

eagerlm_status eagerlm_engine_create(const eagerlm_model* model, size_t max_batch, size_t max_length,
                                     size_t max_queue, eagerlm_engine** engine) {
  return guarded([&] {
    require(engine, "eagerlm_engine_create", "engine");
    *engine = nullptr;
    require(model, "eagerlm_engine_create", "model");
    eagerlm::EngineSettings s;
    s.max_batch = max_batch;
    s.max_length = max_length;
    s.max_queue = max_queue == 0 ? std::numeric_limits<size_t>::max() : max_queue;
    *engine = new eagerlm_engine{eagerlm::Engine(model->model, s)};
  });
}

void eagerlm_engine_free(eagerlm_engine* engine) { delete engine; }

eagerlm_status eagerlm_engine_submit(eagerlm_engine* engine, const char* prompt, size_t prompt_size,
                                     const eagerlm_options* options, eagerlm_request** request) {
  return guarded([&] {
    const char* fn = "eagerlm_engine_submit";
    require(request, fn, "request");
    *request = nullptr;
    require(engine, fn, "engine");
    if (prompt_size > 0) require(prompt, fn, "prompt");
    *request = wrap(engine->engine.submit(std::string_view(prompt ? prompt : "", prompt_size),
                                          options_or_default(options)));
  });
}

eagerlm_status eagerlm_engine_submit_tokens(eagerlm_engine* engine, const int32_t* ids, size_t n_ids,
                                            const eagerlm_options* options, eagerlm_request** request) {
  return guarded([&] {
    const char* fn = "eagerlm_engine_submit_tokens";
    require(request, fn, "request");
    *request = nullptr;
    require(engine, fn, "engine");
    if (n_ids > 0) require(ids, fn, "ids");
    *request = wrap(engine->engine.submit_tokens(std::vector<int32_t>(ids, ids + n_ids), options_or_default(options)));
  });
}

eagerlm_status eagerlm_engine_stats_get(const eagerlm_engine* engine, eagerlm_engine_stats* stats) {
  return guarded([&] {
    require(engine, "eagerlm_engine_stats_get", "engine");
    require(stats, "eagerlm_engine_stats_get", "stats");
    const eagerlm::EngineStats s = engine->engine.stats();
    *stats = eagerlm_engine_stats{s.queued, s.running, s.busy_slots, s.max_batch,
                                  s.steps,  s.prefill_tokens, s.cached_tokens, s.generated_tokens};
  });
}

eagerlm_status eagerlm_engine_step_counts_get(const eagerlm_engine* engine, eagerlm_step_counts* decode,
                                              eagerlm_step_counts* mixed, eagerlm_step_counts* prompt) {
  return guarded([&] {
    require(engine, "eagerlm_engine_step_counts_get", "engine");
    const eagerlm::EngineStats s = engine->engine.stats();
    auto copy = [](const eagerlm::StepCounts& from, eagerlm_step_counts* to) {
      if (to) *to = eagerlm_step_counts{from.steps, from.rows, from.seconds};
    };
    copy(s.decode_steps, decode);
    copy(s.mixed_steps, mixed);
    copy(s.prompt_steps, prompt);
  });
}

eagerlm_status eagerlm_request_next(eagerlm_request* request, int64_t timeout_ms, eagerlm_token* token,
                                    int* has_token) {
  return guarded([&] {
    const char* fn = "eagerlm_request_next";
    require(has_token, fn, "has_token");
    *has_token = 0;
    require(request, fn, "request");
    require(token, fn, "token");
    const auto timeout = timeout_ms < 0 ? std::chrono::milliseconds::max() : std::chrono::milliseconds(timeout_ms);
    auto next = request->request->next(timeout);
    if (!next) return;
    request->last = std::move(*next);
    *token = eagerlm_token{request->last.sample, request->last.token, request->last.text.c_str(),
                           request->last.text.size(), request->last.logprob};
    *has_token = 1;
  });
}

eagerlm_status eagerlm_request_wait(eagerlm_request* request, eagerlm_result** result) {
  return guarded([&] {
    require(result, "eagerlm_request_wait", "result");
    *result = nullptr;
    require(request, "eagerlm_request_wait", "request");
    *result = new eagerlm_result{request->request->wait()};
  });
}

eagerlm_status eagerlm_request_cancel(eagerlm_request* request) {
  return guarded([&] {
    require(request, "eagerlm_request_cancel", "request");
    request->request->cancel();
  });
}

int eagerlm_request_done(const eagerlm_request* request) { return request && request->request->done() ? 1 : 0; }

void eagerlm_request_free(eagerlm_request* request) { delete request; }

}  // extern "C"
