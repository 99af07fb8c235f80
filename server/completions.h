// Running a checked completion request: one engine request per prompt (each with n samples),
// their tokens pulled on the connection's thread, answered as one JSON body or as server-sent
// events. A client that goes away (the peer closes, or a write fails) has its engine requests
// cancelled at once, so its slots are free at the engine's next step.
#pragma once

#include <chrono>

#include <httplib.h>

#include "server/completion_request.h"
#include "server/service.h"

namespace eagerlm::server {

// Answers `request` into `response` (a body, or a chunked event stream). Throws ApiError for what
// fails before anything is sent: a full queue (503 with Retry-After), the engine refusing the
// request (400), a client gone (499), a request cancelled by the drain (503).
void answer_completion(Service& service, CompletionRequest request, httplib::Response& response,
                       std::chrono::steady_clock::time_point arrived);

}  // namespace eagerlm::server
