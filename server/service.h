// What every handler shares: the options, the model and engine (present once loading is done),
// the metrics, the lifecycle and the API key. Handlers read model and engine only when
// lifecycle.phase() says kReady, which publishes them; both outlive every connection.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "eagerlm/engine.hpp"
#include "eagerlm/model.hpp"
#include "server/auth.h"
#include "server/completion_request.h"
#include "server/lifecycle.h"
#include "server/metrics.h"
#include "server/server.h"

namespace eagerlm::server {

struct Service {
  explicit Service(const ServerOptions& o) : options(o), key(o.api_key) {}

  ServerOptions options;
  ApiKey key;
  Lifecycle lifecycle;
  Metrics metrics;
  int64_t started = 0;  // Unix time, /v1/models' "created"
  std::optional<Model> model;
  std::unique_ptr<Engine> engine;
  ServedModel served;
  // Engine requests (one per prompt) submitted and not yet finished: at most parallel + max_queue.
  std::atomic<size_t> admitted{0};
};

}  // namespace eagerlm::server
