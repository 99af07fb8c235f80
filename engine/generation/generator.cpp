#include "engine/generation/generator.h"

#include <chrono>
#include <exception>

#include "engine/core/error.h"

namespace eagerlm {

namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }
}  // namespace

std::vector<GenerationResult> GenerationLoop::generate(const std::vector<std::vector<int32_t>>& prompts,
                                                       const GenerationOptions& options,
                                                       const TokenCallback& on_token) {
  const auto start = Clock::now();
  timings_ = {};
  GenerationOptions shared = options;
  shared.validate();
  resolve_seed(shared.sampling);  // one seed for every prompt of the call
  if (prompts.empty()) return {};

  Scheduler scheduler(model_, tokenizer_, options_);
  const size_t per_prompt = size_t(shared.result_count());
  std::vector<GenerationResult> results(prompts.size() * per_prompt);
  std::exception_ptr error;
  size_t waiting_first = results.size();  // results without a first token yet
  std::vector<bool> has_first(results.size(), false);
  std::vector<RequestId> ids;
  for (size_t i = 0; i < prompts.size(); ++i) {
    Request r;
    r.prompt = prompts[i];
    r.options = shared;
    r.stream_base = uint64_t(i) * per_prompt;
    r.on_token = [&, i](const StreamEvent& e) {
      const size_t k = i * per_prompt + size_t(e.sample);
      if (e.token >= 0 && !has_first[k]) {
        has_first[k] = true;
        --waiting_first;
        if (timings_.first_token_ms == 0) timings_.first_token_ms = ms_since(start);
      }
      return !on_token || on_token(i, e);
    };
    r.on_done = [&, i](RequestOutcome&& out) {
      if (out.error && !error) error = out.error;
      for (size_t s = 0; s < out.results.size() && s < per_prompt; ++s) {
        GenerationResult& g = out.results[s];
        const size_t k = i * per_prompt + s;
        if (!has_first[k]) {  // ended before streaming anything (end-of-text first, or beams)
          has_first[k] = true;
          --waiting_first;
        }
        results[k] = std::move(g);
      }
    };
    timings_.prompt_tokens += int64_t(prompts[i].size());
    try {
      ids.push_back(scheduler.submit(std::move(r)));
    } catch (const Error& e) {
      if (prompts.size() == 1) throw;
      throw Error(e.code(), "prompt " + std::to_string(i) + ": " + e.what());
    }
  }

  double decode_ms = 0;
  bool prefilled = false;
  for (;;) {
    const bool all_started = waiting_first == 0;
    if (all_started && !prefilled) {
      prefilled = true;
      timings_.prefill_ms = ms_since(start);
    }
    const auto step_start = Clock::now();
    if (!scheduler.step()) break;
    if (all_started) {
      decode_ms += ms_since(step_start);
      ++timings_.decode_steps;
    }
    if (error) {  // a callback threw: the call ends
      for (RequestId id : ids) scheduler.cancel(id);
      break;
    }
  }
  if (!prefilled) timings_.prefill_ms = ms_since(start);
  if (error) std::rethrow_exception(error);
  if (timings_.decode_steps > 0) timings_.decode_ms_per_token = decode_ms / double(timings_.decode_steps);
  timings_.total_ms = ms_since(start);
  for (const GenerationResult& g : results) {
    timings_.generated_tokens += int64_t(g.ids.size());
    if (g.sample == 0) timings_.cached_prompt_tokens += g.timings.cached_prompt_tokens;
  }
  return results;
}

}  // namespace eagerlm
