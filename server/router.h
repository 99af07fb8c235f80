// Routing: which path runs which handler, and what every request goes through first (the API
// key, whether the model is ready) and last (errors as OpenAI error objects, the request count
// by endpoint and status). Rejections happen before a body is read.
//
//   GET  /health               ready: 200 {"status": "ok"}; loading or draining: 503   (no key needed)
//   GET  /metrics              Prometheus text
//   GET  /v1/models            the served model
//   POST /v1/completions       completions (server/completions.h)
//   POST /v1/chat/completions  400 without a chat template (server/chat.h)
//   POST /tokenize, /detokenize
#pragma once

#include "server/http_transport.h"
#include "server/service.h"

namespace eagerlm::server {

void install_routes(HttpServer& http, Service& service);

}  // namespace eagerlm::server
