#include "server/metrics.h"

#include <cstdio>
#include <string>
#include <utility>

namespace eagerlm::server {

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void header(std::string& out, const std::string& name, const char* type, const char* help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void sample(std::string& out, const std::string& name, double value) { out += name + " " + number(value) + "\n"; }

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  size_t b = 0;
  while (b < bounds_.size() && value > bounds_[b]) ++b;
  std::lock_guard<std::mutex> lock(mutex_);
  ++counts_[b];
  sum_ += value;
  ++count_;
}

void Histogram::render(std::string& out, const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t cumulative = 0;
  for (size_t b = 0; b < bounds_.size(); ++b) {
    cumulative += counts_[b];
    out += name + "_bucket{le=\"" + number(bounds_[b]) + "\"} " + std::to_string(cumulative) + "\n";
  }
  cumulative += counts_.back();
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(cumulative) + "\n";
  out += name + "_sum " + number(sum_) + "\n";
  out += name + "_count " + std::to_string(count_) + "\n";
}

Metrics::Metrics()
    : first_token_({0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}),
      inter_token_({0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5}),
      request_({0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}) {}

void Metrics::count_request(const std::string& endpoint, int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{endpoint, status}];
}

void Metrics::add_tokens(size_t prompt, size_t generated) {
  prompt_tokens_ += prompt;
  generated_tokens_ += generated;
}

std::string Metrics::render(const std::optional<EngineStats>& engine, const std::string& phase) const {
  std::string out;
  header(out, "eagerlm_http_requests_total", "counter", "HTTP requests answered, by endpoint and status.");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [key, count] : requests_)
      out += "eagerlm_http_requests_total{endpoint=\"" + key.first + "\",status=\"" + std::to_string(key.second) +
             "\"} " + std::to_string(count) + "\n";
  }
  header(out, "eagerlm_prompt_tokens_total", "counter", "Prompt tokens of finished completion requests.");
  sample(out, "eagerlm_prompt_tokens_total", double(prompt_tokens_.load()));
  header(out, "eagerlm_generation_tokens_total", "counter", "Tokens generated for finished completion requests.");
  sample(out, "eagerlm_generation_tokens_total", double(generated_tokens_.load()));
  header(out, "eagerlm_client_disconnects_total", "counter",
         "Completion requests cancelled because the client went away.");
  sample(out, "eagerlm_client_disconnects_total", double(disconnects_.load()));
  header(out, "eagerlm_streams_open", "gauge", "Streaming responses being written now.");
  sample(out, "eagerlm_streams_open", double(streams_.load()));
  header(out, "eagerlm_ready", "gauge", "1 when the model is loaded and requests are taken.");
  sample(out, "eagerlm_ready", phase == "ready" ? 1 : 0);
  if (engine) {
    header(out, "eagerlm_queue_depth", "gauge", "Requests waiting for a cache slot.");
    sample(out, "eagerlm_queue_depth", double(engine->queued));
    header(out, "eagerlm_requests_running", "gauge", "Requests holding cache slots.");
    sample(out, "eagerlm_requests_running", double(engine->running));
    header(out, "eagerlm_slots_busy", "gauge", "Cache slots in use.");
    sample(out, "eagerlm_slots_busy", double(engine->busy_slots));
    header(out, "eagerlm_slots_total", "gauge", "Cache slots (--parallel).");
    sample(out, "eagerlm_slots_total", double(engine->max_batch));
    header(out, "eagerlm_engine_steps_total", "counter", "Forward steps the engine ran.");
    sample(out, "eagerlm_engine_steps_total", double(engine->steps));
    header(out, "eagerlm_prefill_tokens_total", "counter", "Prompt tokens run through the model.");
    sample(out, "eagerlm_prefill_tokens_total", double(engine->prefill_tokens));
    header(out, "eagerlm_cached_prompt_tokens_total", "counter", "Prompt tokens reused from the prompt cache.");
    sample(out, "eagerlm_cached_prompt_tokens_total", double(engine->cached_tokens));
    // The steps by what they carried: where the engine's time goes.
    const std::pair<const char*, const StepCounts*> kinds[] = {
        {"decode", &engine->decode_steps}, {"mixed", &engine->mixed_steps}, {"prompt", &engine->prompt_steps}};
    header(out, "eagerlm_engine_steps_by_kind_total", "counter",
           "Forward steps by what they carried: decode rows only, decode rows and a prompt chunk, prompt chunks only.");
    for (const auto& [kind, counts] : kinds)
      sample(out, std::string("eagerlm_engine_steps_by_kind_total{kind=\"") + kind + "\"}", double(counts->steps));
    header(out, "eagerlm_engine_step_rows_total", "counter", "Tokens those steps carried, by kind.");
    for (const auto& [kind, counts] : kinds)
      sample(out, std::string("eagerlm_engine_step_rows_total{kind=\"") + kind + "\"}", double(counts->rows));
    header(out, "eagerlm_engine_step_seconds_total", "counter", "The model's time on those steps, by kind.");
    for (const auto& [kind, counts] : kinds)
      sample(out, std::string("eagerlm_engine_step_seconds_total{kind=\"") + kind + "\"}", counts->seconds);
  }
  header(out, "eagerlm_time_to_first_token_seconds", "histogram",
         "From a completion request's arrival to its first token, per choice.");
  first_token_.render(out, "eagerlm_time_to_first_token_seconds");
  header(out, "eagerlm_inter_token_latency_seconds", "histogram", "Between consecutive tokens of one choice.");
  inter_token_.render(out, "eagerlm_inter_token_latency_seconds");
  header(out, "eagerlm_request_duration_seconds", "histogram", "Completion requests, arrival to last byte.");
  request_.render(out, "eagerlm_request_duration_seconds");
  return out;
}

}  // namespace eagerlm::server
