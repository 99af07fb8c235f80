// `eagerlm perplexity -m DIR|--preset NAME -f FILE [--ctx N] [--stride S] [--json]`: the
// perplexity of a text file by Hugging Face's sliding-window method (engine/generation/
// perplexity.h): windows of --ctx tokens (default: the model's context) every --stride tokens
// (default: --ctx), each token scored at most once. Prints the perplexity and the token count on stdout,
// timings on stderr, a progress bar on a terminal; --json prints one JSON object and nothing else.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/model_source.h"
#include "cli/progress_bar.h"
#include "engine/core/error.h"
#include "engine/core/text.h"
#include "engine/generation/perplexity.h"
#include "engine/generation/scoring.h"
#include "engine/generation/step_packer.h"
#include "models/gpt2/gpt2_step_model.h"

namespace eagerlm::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct PerplexityFlags {
  ModelFlags source;
  std::string file;
  int64_t ctx = 0, stride = 0;
  const CLI::Option* ctx_flag = nullptr;     // unset: the model's n_positions
  const CLI::Option* stride_flag = nullptr;  // unset: --ctx
  bool json = false;
  bool logprobs = false;
  bool parse_special = false;
  std::string invalid_utf8 = "error";
  int threads = 0;
};

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// The file's text as token ids; text the model cannot encode, invalid UTF-8 or fewer than two
// tokens is a usage error naming -f/--file.
std::vector<int32_t> tokens_of(const std::string& text, const PerplexityFlags& o, const gpt2::LoadedModel& lm) {
  const std::string name = "'" + escape_for_message(o.file) + "'";
  if (!lm.text_problem.empty()) throw UsageError("-f/--file: " + lm.text_problem);
  EncodeOptions enc;
  enc.parse_special = o.parse_special;
  enc.invalid_utf8 = invalid_utf8_mode(o.invalid_utf8);
  std::vector<int32_t> ids;
  try {
    ids = lm.tokenizer.encode(text, enc);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kInvalidArgument) throw;
    throw UsageError("-f/--file: " + name + ": " + e.what() +
                     " (--invalid-utf8 replace turns invalid bytes into U+FFFD)");
  }
  if (ids.size() < 2)
    throw UsageError("-f/--file: " + name + " is " + std::to_string(ids.size()) +
                     " token; perplexity needs at least 2 (the first is only context)");
  return ids;
}

// The window and stride from the flags and the model; out-of-range values are usage errors
// naming the flag (the engine's rules, perplexity_windows, named by its OptionError).
std::pair<int64_t, int64_t> window_and_stride(const PerplexityFlags& o, int64_t n_positions) {
  const int64_t ctx = o.ctx_flag->count() > 0 ? o.ctx : n_positions;
  const int64_t stride = o.stride_flag->count() > 0 ? o.stride : ctx;
  try {
    check_perplexity_window(ctx, stride);
  } catch (const OptionError& e) {
    if (e.option() == "window") throw UsageError("--ctx: expected " + e.expected() + ", got " + e.got());
    throw UsageError("--stride: expected 1 to --ctx (" + std::to_string(ctx) + "), got " + e.got());
  }
  if (ctx > n_positions)
    throw UsageError("--ctx: " + std::to_string(ctx) +
                     " exceeds the model's context (n_positions = " + std::to_string(n_positions) + ")");
  return {ctx, stride};
}

int run_perplexity(const PerplexityFlags& o) {
  // Flag and file errors before the model loads (--ctx against the model's context after).
  gpt2::ForwardLimits limits = execution_limits(o.source);
  if (o.ctx_flag->count() > 0 || o.stride_flag->count() > 0) (void)window_and_stride(o, INT32_MAX);
  const std::string text = read_text_file(o.file, "-f/--file");
  if (text.empty())
    throw UsageError("-f/--file: '" + escape_for_message(o.file) + "' is empty; expected text to score");
  apply_threads(o.threads);
  gpt2::LoadedModel lm = load_model(o.source, o.json);
  const gpt2::Config& cfg = lm.model->config();
  const auto [ctx, stride] = window_and_stride(o, cfg.n_positions);
  const auto t_tokenize = Clock::now();
  const std::vector<int32_t> ids = tokens_of(text, o, lm);
  const double tokenize_ms = ms_since(t_tokenize);

  // A window feeds all but its last token; enough windows in flight to fill a step.
  const std::vector<ScoreRequest> windows = perplexity_windows(ids, ctx, stride);
  const int64_t window_fed = std::min<int64_t>(ctx, int64_t(ids.size())) - 1;
  limits.max_step_rows = std::min<int64_t>(kDefaultStepRows, int64_t(windows.size()) * window_fed);
  limits.max_slots = scoring_slots(windows, limits.max_step_rows);
  limits.max_len = window_fed;
  limits.target_logprobs = true;
  gpt2::Gpt2StepModel model(lm.model, limits);

  ProgressBar bar("scoring", !o.json, "tokens", 1.0);
  const auto t_score = Clock::now();
  const PerplexityResult r =
      perplexity(model, ids, ctx, stride, [&](int64_t fed, int64_t total) { bar.update(size_t(fed), size_t(total)); });
  const double score_ms = ms_since(t_score);
  bar.finish();
  const double tokens_per_second = score_ms > 0 ? double(r.tokens) * 1000.0 / score_ms : 0.0;
  const double fed_per_second = score_ms > 0 ? double(r.fed) * 1000.0 / score_ms : 0.0;

  if (o.json) {
    nlohmann::json out = {{"model", lm.description},  {"perplexity", r.perplexity()},
                          {"tokens", r.tokens},       {"nll", r.nll},
                          {"mean_nll", r.mean_nll()}, {"ctx", ctx},
                          {"stride", stride},         {"windows", r.windows},
                          {"text_tokens", ids.size()}};
    if (o.logprobs) {
      // logprobs[i] belongs to ids[i]; null where a token is not scored (the first; without
      // overlap, each window's first).
      nlohmann::json lp(ids.size(), nullptr);
      for (size_t k = 0; k < r.positions.size(); ++k) lp[size_t(r.positions[k])] = r.logprobs[k];
      out["ids"] = ids;
      out["logprobs"] = lp;
    }
    out["timings"] = {{"load_ms", lm.load_ms}, {"tokenize_ms", tokenize_ms},
                      {"score_ms", score_ms},  {"tokens_per_second", tokens_per_second},
                      {"fed_tokens", r.fed},   {"fed_tokens_per_second", fed_per_second}};
    write_stdout(out.dump(2) + "\n", "the result");
    return 0;
  }
  char line[160];
  std::snprintf(line, sizeof line, "perplexity %.4f over %lld tokens (mean nll %.6f nats)\n", r.perplexity(),
                (long long)r.tokens, r.mean_nll());
  write_stdout(line, "the result");
  std::fprintf(stderr,
               "eagerlm: load %.0f ms | %zu tokens in %lld windows of %lld (stride %lld) | scored in %.1f ms: %.1f "
               "tokens/s (%.1f tokens/s fed)\n",
               lm.load_ms, ids.size(), (long long)r.windows, (long long)ctx, (long long)stride, score_ms,
               tokens_per_second, fed_per_second);
  return 0;
}

}  // namespace

Subcommand add_perplexity_command(CLI::App& root) {
  auto o = std::make_shared<PerplexityFlags>();
  CLI::App* app = root.add_subcommand("perplexity", "Perplexity of a text file (Hugging Face's sliding window)");
  add_model_options(*app, o->source);
  app->add_option("-f,--file", o->file, "The text to score (UTF-8)")->required();
  o->ctx_flag = app->add_option("--ctx,-c", o->ctx, "Tokens per window, at least 2 (default: the model's context)");
  o->stride_flag = app->add_option("--stride", o->stride, "Tokens between window starts, 1 to --ctx (default: --ctx)");
  app->add_flag("--json", o->json, "Print one JSON object");
  app->add_flag("--logprobs", o->logprobs, "With --json: also the text's ids and each one's log p (null if unscored)");
  app->add_flag("--parse-special", o->parse_special, "Parse <|endoftext|> in the text as the special token");
  add_invalid_utf8_option(*app, o->invalid_utf8);
  add_threads_option(*app, o->threads);
  return {app, [o] { return run_perplexity(*o); }};
}

}  // namespace eagerlm::cli
