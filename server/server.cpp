#include "server/server.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <thread>

#include "eagerlm/error.hpp"
#include "server/http_transport.h"
#include "server/router.h"
#include "server/service.h"

namespace eagerlm::server {

namespace {

// Stops the listener and joins its thread however serve() ends.
struct Listener {
  HttpServer& http;
  std::thread thread;
  ~Listener() {
    http.stop();
    if (thread.joinable()) thread.join();
  }
};

std::string url(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

int serve(const ServerOptions& o, const std::function<Model()>& load) {
  Service s(o);
  s.started = int64_t(std::time(nullptr));
  s.lifecycle.watch_signals();

  TransportLimits limits;
  limits.read_timeout_s = o.read_timeout_s;
  limits.idle_timeout_s = o.idle_timeout_s;
  limits.write_timeout_s = o.write_timeout_s;
  limits.max_request_bytes = o.max_body_bytes + (64u << 10);  // the body and its headers
  // Every running or queued request holds a connection; more threads than that serve /health,
  // /metrics and the 503s of a full queue.
  limits.threads = o.http_threads > 0 ? o.http_threads : std::clamp<size_t>(o.parallel + o.max_queue + 16, 32, 1024);
  HttpServer http(limits);
  http.set_payload_max_length(o.max_body_bytes);
  http.set_keep_alive_timeout(time_t(std::max(1.0, o.idle_timeout_s)));
  install_routes(http, s);

  int port = o.port;
  errno = 0;
  const bool bound = port == 0 ? (port = http.bind_to_any_port(o.host)) > 0 : http.bind_to_port(o.host, port);
  if (!bound)
    throw Error(ErrorCode::kIo, "cannot listen on " + url(o.host, o.port) +
                                    (errno ? std::string(": ") + std::strerror(errno) : std::string()) +
                                    " (is the port in use, or the host not an address of this machine?)");
  if (!http.set_backlog(1024))
    std::fprintf(stderr, "eagerlm: cannot raise the listen backlog (%s); bursts of connections may be reset\n",
                 std::strerror(errno));
  Listener listener{http, std::thread([&] {
                      if (!http.listen_after_bind()) s.lifecycle.request_stop(0);
                    })};
  // stop() only reaches a server that is running: wait for it to be.
  for (int i = 0; i < 5000 && !http.is_running() && !s.lifecycle.stop_requested(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::fprintf(stderr, "eagerlm: listening on %s (loading the model)\n", url(o.host, port).c_str());

  s.model.emplace(load());
  const ModelInfo info = s.model->info();
  EngineSettings settings;
  settings.max_batch = o.parallel;
  settings.max_length = o.ctx_size;
  // The engine counts a request as queued until its worker admits it, even with a slot free; the
  // server's own count (Service::admission) applies --max-queue to what waits beyond the slots.
  settings.max_queue = o.parallel + o.max_queue;
  settings.prompt_cache = o.prompt_cache;
  settings.prefill_chunk = o.prefill_chunk;
  s.engine = std::make_unique<Engine>(*s.model, settings);
  s.served.id = o.model_id;
  s.served.context_length = o.ctx_size > 0 ? o.ctx_size : info.context_length;
  s.served.vocab_size = info.vocab_size;
  s.served.slots = o.parallel;
  s.served.eos_token_id = info.eos_token_id;
  s.lifecycle.set_phase(Phase::kReady);
  std::fprintf(stderr, "eagerlm: ready: model \"%s\", %zu slots of %zu tokens, on %s%s\n", o.model_id.c_str(),
               o.parallel, s.served.context_length, url(o.host, port).c_str(),
               o.api_key.empty() ? "" : " (API key required)");

  const int sig = s.lifecycle.wait_for_stop();
  s.lifecycle.set_phase(Phase::kDraining);
  http.close_connections();
  const EngineStats before = s.engine->stats();
  std::fprintf(stderr, "eagerlm: draining: %zu running, %zu queued (at most %.0f s)\n", before.running, before.queued,
               o.drain_timeout_s);
  s.engine->drain(std::chrono::milliseconds(int64_t(o.drain_timeout_s * 1000)));
  // The drained requests' connections finish writing; then the listener and its threads stop.
  http.stop();
  if (listener.thread.joinable()) listener.thread.join();
  s.engine.reset();
  if (sig == 0) {
    std::fprintf(stderr, "eagerlm: the listener stopped unexpectedly\n");
    return 1;
  }
  std::fprintf(stderr, "eagerlm: stopped\n");
  return 0;
}

}  // namespace eagerlm::server
