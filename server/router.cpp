#include "server/router.h"

#include <chrono>
#include <string>

#include "server/api_error.h"
#include "server/chat.h"
#include "server/completion_format.h"
#include "server/completions.h"
#include "server/json_body.h"
#include "server/tokenize_endpoints.h"

namespace eagerlm::server {

namespace {

using HandlerResponse = httplib::Server::HandlerResponse;

// The endpoints /metrics counts by name; anything else is "other" (no label per stray path).
const char* const kEndpoints[] = {"/health", "/metrics", "/v1/models", "/v1/completions", "/v1/chat/completions",
                                  "/tokenize", "/detokenize"};

std::string endpoint_label(const std::string& path) {
  for (const char* e : kEndpoints)
    if (path == e) return e;
  return "other";
}

bool needs_model(const std::string& path) {
  return path == "/v1/models" || path == "/v1/completions" || path == "/v1/chat/completions" || path == "/tokenize" ||
         path == "/detokenize";
}

void reply(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  if (e.retry_after_s > 0) res.set_header("Retry-After", std::to_string(e.retry_after_s));
  if (e.status == 401) res.set_header("WWW-Authenticate", "Bearer");
  res.set_content(error_body(e), "application/json");
}

ApiError not_ready(Phase phase) {
  ApiError e = phase == Phase::kLoading
                   ? ApiError(503, "the model is still loading; retry shortly", {}, "model_loading")
                   : ApiError(503, "the server is shutting down and takes no new requests", {}, "server_shutdown");
  e.retry_after_s = phase == Phase::kLoading ? 5 : 1;
  return e;
}

nlohmann::json body_of(Service& s, const httplib::Request& req) {
  if (req.body.size() > s.options.max_body_bytes)  // a chunked body has no length to check first
    throw ApiError(413, "the request body is " + std::to_string(req.body.size()) + " bytes; at most " +
                            std::to_string(s.options.max_body_bytes) + " are accepted",
                   {}, "request_too_large");
  return parse_json_object(req.body);
}

// The model and engine, once published (the pre-routing check passed, but a drain may begin).
void require_ready(Service& s) {
  const Phase phase = s.lifecycle.phase();
  if (phase != Phase::kReady) throw not_ready(phase);
}

}  // namespace

void install_routes(HttpServer& http, Service& s) {
  http.set_pre_routing_handler([&s](const httplib::Request& req, httplib::Response& res) {
    if (req.path == "/health") return HandlerResponse::Unhandled;
    if (!s.key.accepts(req.get_header_value("Authorization"))) {
      const bool given = req.has_header("Authorization");
      reply(res, ApiError(401, given ? "incorrect API key provided" : "no API key provided: send Authorization: Bearer KEY",
                          {}, "invalid_api_key"));
      HttpServer::close_after_response();  // the body, if any, was not read
      return HandlerResponse::Handled;
    }
    const Phase phase = s.lifecycle.phase();
    if (needs_model(req.path) && phase != Phase::kReady) {
      // /v1/models answers while draining; everything else needs a model being served.
      if (!(req.path == "/v1/models" && phase == Phase::kDraining)) {
        reply(res, not_ready(phase));
        HttpServer::close_after_response();
        return HandlerResponse::Handled;
      }
    }
    return HandlerResponse::Unhandled;
  });

  http.Get("/health", [&s](const httplib::Request&, httplib::Response& res) {
    const Phase phase = s.lifecycle.phase();
    nlohmann::json body = {{"status", phase == Phase::kReady ? "ok" : phase_name(phase)}};
    if (phase == Phase::kReady) {
      const EngineStats st = s.engine->stats();
      body["slots_idle"] = st.max_batch - st.busy_slots;
      body["slots_processing"] = st.busy_slots;
      body["queue_depth"] = st.queued;
    }
    res.status = phase == Phase::kReady ? 200 : 503;
    if (phase != Phase::kReady) res.set_header("Retry-After", phase == Phase::kLoading ? "5" : "1");
    res.set_content(json_text(body), "application/json");
  });

  http.Get("/metrics", [&s](const httplib::Request&, httplib::Response& res) {
    const Phase phase = s.lifecycle.phase();
    std::optional<EngineStats> stats;
    if (phase != Phase::kLoading) stats = s.engine->stats();
    res.set_content(s.metrics.render(stats, phase_name(phase)), "text/plain; version=0.0.4; charset=utf-8");
  });

  http.Get("/v1/models", [&s](const httplib::Request&, httplib::Response& res) {
    const nlohmann::json model = {{"id", s.served.id},
                                  {"object", "model"},
                                  {"created", s.started},
                                  {"owned_by", "eagerlm"},
                                  {"max_model_len", s.served.context_length}};
    res.set_content(json_text({{"object", "list"}, {"data", {model}}}), "application/json");
  });

  http.Post("/v1/completions", [&s](const httplib::Request& req, httplib::Response& res) {
    const auto arrived = std::chrono::steady_clock::now();
    const nlohmann::json body = body_of(s, req);
    require_ready(s);
    answer_completion(s, parse_completion_request(body, s.served, *s.model), res, arrived);
  });

  http.Post("/v1/chat/completions", [&s](const httplib::Request& req, httplib::Response&) {
    body_of(s, req);  // a malformed body is still told so
    throw chat_unavailable(s.served.id, s.options.chat_template);
  });

  http.Post("/tokenize", [&s](const httplib::Request& req, httplib::Response& res) {
    const nlohmann::json body = body_of(s, req);
    require_ready(s);
    res.set_content(tokenize_response(body, *s.model), "application/json");
  });

  http.Post("/detokenize", [&s](const httplib::Request& req, httplib::Response& res) {
    const nlohmann::json body = body_of(s, req);
    require_ready(s);
    res.set_content(detokenize_response(body, *s.model), "application/json");
  });

  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    try {
      std::rethrow_exception(ep);
    } catch (const ApiError& e) {
      reply(res, e);
    } catch (const std::bad_alloc&) {
      reply(res, ApiError(500, "out of memory while answering the request"));
    } catch (const std::exception& e) {
      reply(res, ApiError(500, std::string("internal error: ") + e.what()));
    } catch (...) {
      reply(res, ApiError(500, "internal error"));
    }
  });

  // What cpp-httplib answers by itself (unknown paths, malformed HTTP, a body over the limit)
  // gets an OpenAI error body too.
  http.set_error_handler(httplib::Server::HandlerWithResponse([&s](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return HandlerResponse::Unhandled;  // one of ours
    if (HttpServer::request_too_large() || res.status == 413) {
      reply(res, ApiError(413, "the request is larger than the server accepts (a body of at most " +
                                   std::to_string(s.options.max_body_bytes) + " bytes)",
                          {}, "request_too_large"));
      HttpServer::close_after_response();
    } else if (HttpServer::request_timed_out()) {
      reply(res, ApiError(408, "the request did not arrive within " + std::to_string(int(s.options.read_timeout_s)) + " s",
                          {}, "request_timeout"));
      HttpServer::close_after_response();
    } else if (res.status == 404) {
      reply(res, ApiError(404, "unknown request URL: " + client_text(req.method) + " " + client_text(req.path), {}, "unknown_url"));
    } else {
      reply(res, ApiError(res.status, "malformed HTTP request (status " + std::to_string(res.status) + ")"));
      HttpServer::close_after_response();
    }
    return HandlerResponse::Handled;
  }));

  http.set_post_routing_handler([&s](const httplib::Request& req, httplib::Response& res) {
    s.metrics.count_request(endpoint_label(req.path), res.status);
  });
}

}  // namespace eagerlm::server
