// `eagerlm serve`: an OpenAI-compatible HTTP server (server/, docs/serving.md) over one model,
// with continuous batching. Binds loopback unless --host says otherwise.
#include <memory>
#include <string>

#include "cli/cli_common.h"
#include "cli/command.h"
#include "cli/commands.h"
#include "cli/model_source.h"
#include "eagerlm/common.hpp"
#include "eagerlm/error.hpp"
#ifdef EAGERLM_HAVE_SERVER
#include "server/server.h"
#endif

namespace eagerlm::cli {

namespace {

struct ServeFlags {
  ModelFlags source;
  std::string host = "127.0.0.1", alias, api_key, api_key_file;
  int port = 8080, threads = 0;
  bool no_prompt_cache = false;
  int64_t parallel = 4, ctx_size = 0, max_queue = 64, max_body = 1 << 20, prefill_chunk = 0;
  double timeout = 30, read_timeout = 10, idle_timeout = 5, write_timeout = 10;
};

[[maybe_unused]] std::string trimmed(std::string s) {  // unused when built without the server
  const char* space = " \t\r\n";
  s.erase(0, s.find_first_not_of(space));
  const size_t end = s.find_last_not_of(space);
  s.erase(end == std::string::npos ? 0 : end + 1);
  return s;
}

int run_serve(const ServeFlags& f) {
#ifndef EAGERLM_HAVE_SERVER
  (void)f;
  throw Error(ErrorCode::kUnsupported,
              "this eagerlm was built without the server: cpp-httplib was not found when it was configured "
              "(install libcpp-httplib-dev, or run tools/setup.sh, and build again)");
#else
  server::ServerOptions o;
  o.host = f.host;
  o.port = f.port;
  o.parallel = size_t(f.parallel);
  o.ctx_size = size_t(f.ctx_size);
  o.max_queue = size_t(f.max_queue);
  o.prompt_cache = !f.no_prompt_cache;
  o.prefill_chunk = size_t(f.prefill_chunk);
  o.drain_timeout_s = f.timeout;
  o.read_timeout_s = f.read_timeout;
  o.idle_timeout_s = f.idle_timeout;
  o.write_timeout_s = f.write_timeout;
  o.max_body_bytes = size_t(f.max_body);
  o.model_id = f.alias.empty() ? model_name(f.source) : f.alias;
  o.api_key = f.api_key;
  if (!f.api_key_file.empty()) {
    o.api_key = trimmed(read_text_file(f.api_key_file, "--api-key-file"));
    if (o.api_key.empty()) throw UsageError("--api-key-file: '" + f.api_key_file + "' holds no key");
  }
  if (!f.api_key.empty() && trimmed(f.api_key) != f.api_key)
    throw UsageError("--api-key: the key begins or ends with white space");
  o.chat_template = server::find_chat_template(f.source.model_dir);
  parse_device(f.source.device);  // flag errors before anything starts
  if (f.threads > 0) set_cpu_threads(f.threads);
  return server::serve(o, [&f] {
    Model model = load_api_model(f.source, false);
    const size_t context = model.info().context_length;
    if (size_t(f.ctx_size) > context)
      throw UsageError("--ctx-size: " + std::to_string(f.ctx_size) + " exceeds the model's context (n_positions = " +
                       std::to_string(context) + ")");
    return model;
  });
#endif
}

}  // namespace

Subcommand add_serve_command(CLI::App& root) {
  auto f = std::make_shared<ServeFlags>();
  CLI::App* app = root.add_subcommand("serve", "Serve the model over HTTP, with OpenAI's completions API");
  add_model_options(*app, f->source, {.execution = false});
  app->add_option("--host", f->host, "Address to listen on (0.0.0.0: every interface)")->capture_default_str();
  app->add_option("--port", f->port, "Port to listen on; 0 picks a free one (printed)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  app->add_option("--parallel", f->parallel, "Sequences decoded together (cache slots)")
      ->check(CLI::Range(int64_t(1), int64_t(1024)))
      ->capture_default_str();
  app->add_option("--ctx-size,-c", f->ctx_size, "Tokens per slot, prompt and completion (default: the model's context)")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 24));
  auto* key = app->add_option("--api-key", f->api_key, "Require Authorization: Bearer KEY (default: no key)");
  auto* key_file = app->add_option("--api-key-file", f->api_key_file, "Read the API key from this file");
  key->excludes(key_file);
  app->add_option("--max-queue", f->max_queue, "Requests waiting for a slot before new ones get 503")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 20))
      ->capture_default_str();
  app->add_flag("--no-prompt-cache", f->no_prompt_cache, "Prefill every prompt in full (no reuse of cached prefixes)");
  app->add_option("--prefill-chunk", f->prefill_chunk,
                  "Prompt tokens a step carries beside the running streams' tokens: each chunk delays them "
                  "(default: the device's, 64 on the CPU, 256 on CUDA)")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 20));
  app->add_option("--timeout", f->timeout, "On SIGTERM, seconds running requests get to finish before cancelling")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  app->add_option("--read-timeout", f->read_timeout, "Seconds a request's headers and body may take to arrive")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  app->add_option("--idle-timeout", f->idle_timeout, "Seconds an idle keep-alive connection stays open")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  app->add_option("--write-timeout", f->write_timeout, "Seconds a client may take no bytes before it is dropped")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  app->add_option("--max-body", f->max_body, "Largest request body in bytes (larger: 413)")
      ->check(CLI::Range(int64_t(1024), int64_t(1) << 30))
      ->capture_default_str();
  app->add_option("--alias", f->alias, "Model name clients use (default: the directory's name, or the preset)");
  add_threads_option(*app, f->threads);
  return {app, [f] { return run_serve(*f); }};
}

}  // namespace eagerlm::cli
