// What /metrics reports, in Prometheus' text format (version 0.0.4): requests by endpoint and
// status, prompt and generated tokens, the engine's queue and slots, and latency histograms
// (time to first token, time between tokens, request duration) as the server's connection
// threads saw the tokens arrive. Thread-safe: every handler records into one Metrics.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "eagerlm/engine.hpp"

namespace eagerlm::server {

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value);
  // The metric's lines: name_bucket{le=...}, name_sum, name_count.
  void render(std::string& out, const std::string& name) const;

 private:
  std::vector<double> bounds_;
  mutable std::mutex mutex_;
  std::vector<uint64_t> counts_;  // per bucket (not cumulative), the last one +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

class Metrics {
 public:
  Metrics();

  // One answered request; endpoint is one of the served paths or "other".
  void count_request(const std::string& endpoint, int status);
  void add_tokens(size_t prompt, size_t generated);
  void observe_first_token(double seconds) { first_token_.observe(seconds); }
  void observe_inter_token(double seconds) { inter_token_.observe(seconds); }
  void observe_request(double seconds) { request_.observe(seconds); }
  void stream_opened() { ++streams_; }
  void stream_closed() { --streams_; }
  void client_disconnected() { ++disconnects_; }

  // The whole exposition; engine stats when a model is being served.
  std::string render(const std::optional<EngineStats>& engine, const std::string& phase) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::atomic<uint64_t> prompt_tokens_{0}, generated_tokens_{0}, disconnects_{0};
  std::atomic<int64_t> streams_{0};
  Histogram first_token_, inter_token_, request_;
};

}  // namespace eagerlm::server
