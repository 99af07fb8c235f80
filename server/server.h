// `eagerlm serve`: an OpenAI-compatible HTTP server over eagerlm::Engine (continuous batching).
// The front end's one entry point; the CLI parses the flags into ServerOptions.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "eagerlm/model.hpp"

namespace eagerlm::server {

struct ServerOptions {
  std::string host = "127.0.0.1";  // loopback unless told otherwise
  int port = 8080;                 // 0: any free port (the one chosen is printed)
  size_t parallel = 4;             // cache slots: sequences decoded together
  size_t ctx_size = 0;             // tokens per slot (prompt + completion); 0: the model's context
  size_t max_queue = 64;           // requests waiting for a slot beyond the running ones; more: 503
  bool prompt_cache = true;        // reuse the cache of earlier prompts' common prefixes
  size_t prefill_chunk = 0;        // prompt tokens a step carries beside decode rows; 0: the device's
  std::string api_key;             // empty: no authentication
  double drain_timeout_s = 30;     // SIGTERM: how long running requests may take to finish
  double read_timeout_s = 10;      // a request's headers and body must arrive within this
  double idle_timeout_s = 5;       // keep-alive connections idle longer are closed
  double write_timeout_s = 10;     // a client that takes no bytes for this long is dropped
  size_t max_body_bytes = 1u << 20;
  size_t http_threads = 0;         // connections served at once; 0: derived from parallel and max_queue
  std::string model_id;            // the name clients use ("model"); required
  std::string chat_template;       // the model directory's chat template, when it has one
};

// Binds the address (throws eagerlm::Error kIo naming it when it cannot), answers /health with
// "loading" while load() runs, then serves until SIGINT or SIGTERM, drains and returns the exit
// status (0 after a drain). It handles SIGINT and SIGTERM while it runs (the previous handlers
// are restored when it returns).
int serve(const ServerOptions& options, const std::function<Model()>& load);

// The chat template of a Hugging Face model directory (tokenizer_config.json's "chat_template",
// or chat_template.jinja / chat_template.json), or "" when it has none.
std::string find_chat_template(const std::string& model_dir);

}  // namespace eagerlm::server
