// `eagerlm generate`: text generation from a prompt (-p), a file (-f, the whole file is one
// prompt), or a file of prompts, one per line (--prompt-file, generated as one batch). Text
// streams to stdout as it is generated (one prompt) or is printed per prompt (a batch); timings
// go to stderr. --json prints one JSON object instead and nothing else.
#include <time.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "engine/core/error.h"
#include "engine/generation/generator.h"
#include "models/gpt2/gpt2_step_model.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/commands.h"
#include "tools/cli/model_source.h"

namespace eagerlm::cli {

namespace {

struct GenerateOptions {
  ModelSource source;
  std::string prompt, prompt_file_whole, prompt_file_lines, prompt_ids;
  bool prompt_given = false;
  int32_t max_new_tokens = 128;
  float temperature = 0.8f, top_p = 0.95f, min_p = 0.05f, repetition_penalty = 1.0f;
  int32_t top_k = 40;
  int64_t seed = -1;
  std::vector<std::string> stop;
  bool ignore_eos = false, logprobs = false, json = false, truncate = false, parse_special = false;
  bool timings_per_token = false;
  std::string invalid_utf8 = "error";
  int threads = 0;
  int64_t max_len = 0;
};

std::string read_file(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::kIo, std::string(flag) + ": cannot open '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<int32_t> parse_ids(const std::string& text) {
  std::vector<int32_t> ids;
  std::string token;
  std::stringstream ss(text);
  while (std::getline(ss, token, ',')) {
    char* end = nullptr;
    const long v = std::strtol(token.c_str(), &end, 10);
    if (token.empty() || *end != '\0' || v < 0 || v > INT32_MAX)
      throw UsageError("--prompt-ids: expected comma-separated non-negative token ids, got '" + token + "'");
    ids.push_back(int32_t(v));
  }
  if (ids.empty()) throw UsageError("--prompt-ids: expected at least one token id");
  return ids;
}

void check_flags(const GenerateOptions& o) {
  auto bad = [](const std::string& flag, const std::string& want, double got) {
    std::ostringstream m;
    m << flag << ": expected " << want << ", got " << got;
    throw UsageError(m.str());
  };
  if (!(o.temperature >= 0) || !std::isfinite(o.temperature)) bad("--temperature", "a number >= 0 (0 = greedy)", o.temperature);
  if (!(o.top_p > 0 && o.top_p <= 1)) bad("--top-p", "a number in (0, 1] (1 = off)", o.top_p);
  if (!(o.min_p >= 0 && o.min_p <= 1)) bad("--min-p", "a number in [0, 1] (0 = off)", o.min_p);
  if (!(o.repetition_penalty > 0) || !std::isfinite(o.repetition_penalty))
    bad("--repetition-penalty", "a number > 0 (1 = off)", o.repetition_penalty);
  if (o.top_k < 0) bad("--top-k", "an integer >= 0 (0 = off)", o.top_k);
  if (o.max_new_tokens < 0) bad("-n/--max-new-tokens", "an integer >= 0", o.max_new_tokens);
  if (o.seed < -1) bad("-s/--seed", "an integer >= 0, or -1 for a random seed", double(o.seed));
}

struct Prompts {
  std::vector<std::string> texts;
  std::vector<std::vector<int32_t>> ids;
};

Prompts read_prompts(const GenerateOptions& o, const Tokenizer& tok, int64_t context, int32_t eos) {
  Prompts p;
  if (!o.prompt_ids.empty()) {
    p.ids.push_back(parse_ids(o.prompt_ids));
    p.texts.push_back(tok.decode(p.ids.back()));
  } else if (!o.prompt_file_lines.empty()) {
    std::stringstream ss(read_file(o.prompt_file_lines, "--prompt-file"));
    for (std::string line; std::getline(ss, line);) p.texts.push_back(line);
    if (p.texts.empty()) throw UsageError("--prompt-file: '" + o.prompt_file_lines + "' has no prompts");
  } else if (!o.prompt_file_whole.empty()) {
    p.texts.push_back(read_file(o.prompt_file_whole, "-f/--file"));
  } else {
    p.texts.push_back(o.prompt);
  }
  EncodeOptions enc;
  enc.parse_special = o.parse_special;
  enc.invalid_utf8 = o.invalid_utf8 == "replace" ? InvalidUtf8::kReplace : InvalidUtf8::kError;
  if (p.ids.empty())
    for (size_t i = 0; i < p.texts.size(); ++i) {
      try {
        p.ids.push_back(tok.encode(p.texts[i], enc));
      } catch (const Error& e) {
        throw Error(e.code(), "prompt " + std::to_string(i + 1) + ": " + e.what());
      }
      // An empty prompt starts from <|endoftext|>, as OpenAI's unconditional samples do.
      if (p.ids.back().empty()) p.ids.back().push_back(eos);
    }
  for (size_t i = 0; i < p.ids.size(); ++i) {
    auto& ids = p.ids[i];
    if (int64_t(ids.size()) <= context) continue;
    if (!o.truncate)
      throw UsageError("prompt " + std::to_string(i + 1) + " has " + std::to_string(ids.size()) +
                       " tokens, more than the context of " + std::to_string(context) +
                       " (shorten it, or pass --truncate to keep its last " + std::to_string(context) + ")");
    std::fprintf(stderr, "eagerlm: prompt %zu truncated from the left: %zu -> %lld tokens\n", i + 1, ids.size(),
                 (long long)context);
    ids.erase(ids.begin(), ids.end() - context);
  }
  return p;
}

int run_generate(GenerateOptions& o) {
  check_flags(o);
  apply_threads(o.threads);
  const uint64_t seed = o.seed >= 0 ? uint64_t(o.seed) : std::random_device{}();
  gpt2::ForwardLimits limits = execution_limits(o.source);  // flag errors before loading
  LoadedModel lm = load_model(o.source, o.json);
  const gpt2::Config& cfg = lm.model->config();
  if (o.max_len > cfg.n_positions)
    throw UsageError("--max-len: " + std::to_string(o.max_len) + " exceeds the model's context (n_positions = " +
                     std::to_string(cfg.n_positions) + ")");
  const int64_t context = o.max_len > 0 ? o.max_len : cfg.n_positions;
  Prompts prompts = read_prompts(o, lm.tokenizer, context, int32_t(cfg.eos_token_id));

  size_t longest = 0;
  for (const auto& p : prompts.ids) longest = std::max(longest, p.size());
  limits.max_slots = int64_t(prompts.ids.size());
  limits.max_len = std::min<int64_t>(context, int64_t(longest) + std::max(o.max_new_tokens, 1));
  gpt2::Gpt2StepModel step_model(lm.model, limits);

  GenerationOptions g;
  g.max_new_tokens = o.max_new_tokens;
  g.sampling = {o.temperature, o.top_k, o.top_p, o.min_p, o.repetition_penalty, seed};
  g.stop = o.stop;
  g.ignore_eos = o.ignore_eos;
  g.logprobs = o.logprobs;
  g.eos_id = int32_t(cfg.eos_token_id);

  const bool stream = !o.json && prompts.ids.size() == 1;
  if (o.seed < 0 && !o.json) std::fprintf(stderr, "eagerlm: seed %llu\n", (unsigned long long)seed);
  if (stream) {
    std::fwrite(prompts.texts[0].data(), 1, prompts.texts[0].size(), stdout);
    std::fflush(stdout);
  }
  GenerationLoop gen(step_model, lm.tokenizer);
  // --timings-per-token: token_ms[k] is when the k-th token of the batch (the first sequence to
  // reach index k) was sampled, in ms from just before generation; the origin is also given on
  // CLOCK_MONOTONIC so another process on the machine (a benchmark) can place it on its clock.
  std::vector<double> token_ms;
  std::vector<size_t> tokens_seen(prompts.ids.size(), 0);
  timespec origin_ts{};
  clock_gettime(CLOCK_MONOTONIC, &origin_ts);
  const auto origin = std::chrono::steady_clock::now();
  TokenCallback on_token;
  if (stream || o.timings_per_token)
    on_token = [&, stream](size_t index, int32_t token, const std::string& text) {
      if (o.timings_per_token && token >= 0 && tokens_seen[index]++ == token_ms.size()) {
        const auto elapsed = std::chrono::steady_clock::now() - origin;
        token_ms.push_back(std::chrono::duration<double, std::milli>(elapsed).count());
      }
      if (stream) {
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
      }
      return true;
    };
  const auto results = gen.generate(prompts.ids, g, on_token);
  const GenerationTimings& t = gen.timings();

  if (o.json) {
    nlohmann::json out = {{"model", lm.description}, {"seed", seed}, {"results", nlohmann::json::array()}};
    for (size_t i = 0; i < results.size(); ++i) {
      nlohmann::json r = {{"prompt", prompts.texts[i]},
                          {"prompt_ids", prompts.ids[i]},
                          {"ids", results[i].ids},
                          {"text", results[i].text},
                          {"finish_reason", finish_reason_name(results[i].finish_reason)}};
      if (o.logprobs) r["logprobs"] = results[i].logprobs;
      out["results"].push_back(r);
    }
    out["timings"] = {{"load_ms", lm.load_ms},
                      {"prefill_ms", t.prefill_ms},
                      {"first_token_ms", t.first_token_ms},
                      {"decode_ms_per_token", t.decode_ms_per_token},
                      {"tokens_per_second", t.tokens_per_second()},
                      {"prompt_tokens", t.prompt_tokens},
                      {"generated_tokens", t.generated_tokens}};
    if (o.timings_per_token) {
      out["timings"]["token_ms"] = token_ms;
      out["timings"]["monotonic_origin_ms"] = double(origin_ts.tv_sec) * 1e3 + double(origin_ts.tv_nsec) * 1e-6;
    }
    // Invalid UTF-8 in generated text (random weights can emit any byte) becomes U+FFFD.
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  if (stream) {
    std::fputc('\n', stdout);
  } else {
    for (size_t i = 0; i < results.size(); ++i)
      std::printf("%s%s\n%s", prompts.texts[i].c_str(), results[i].text.c_str(), i + 1 < results.size() ? "\n" : "");
  }
  std::fflush(stdout);
  std::fprintf(stderr,
               "eagerlm: load %.0f ms | prompt %lld tokens, prefill %.1f ms (%.0f tokens/s) | first token %.1f ms | "
               "decode %.2f ms/token | %lld tokens, %.1f tokens/s\n",
               lm.load_ms, (long long)t.prompt_tokens, t.prefill_ms,
               t.prefill_ms > 0 ? double(t.prompt_tokens) * 1000.0 / t.prefill_ms : 0.0, t.first_token_ms,
               t.decode_ms_per_token, (long long)t.generated_tokens, t.tokens_per_second());
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i].finish_reason == FinishReason::kLength && int64_t(results[i].ids.size()) < o.max_new_tokens)
      std::fprintf(stderr, "eagerlm: prompt %zu stopped at the context length (%lld tokens)\n", i + 1,
                   (long long)limits.max_len);
  return 0;
}

}  // namespace

Subcommand add_generate_command(CLI::App& root) {
  auto o = std::make_shared<GenerateOptions>();
  CLI::App* app = root.add_subcommand("generate", "Generate text with a GPT-2 model");
  add_model_options(*app, o->source);
  auto* p = app->add_option("-p,--prompt", o->prompt, "Prompt text");
  auto* f = app->add_option("-f,--file", o->prompt_file_whole, "Read the whole file as one prompt");
  auto* pf = app->add_option("--prompt-file", o->prompt_file_lines, "One prompt per line, generated as one batch");
  auto* pi = app->add_option("--prompt-ids", o->prompt_ids, "Prompt as comma-separated token ids");
  p->excludes(f, pf, pi);
  f->excludes(pf, pi);
  pf->excludes(pi);
  app->add_option("-n,--max-new-tokens,--n-predict", o->max_new_tokens, "Tokens to generate per prompt")
      ->capture_default_str();
  app->add_option("--temperature,--temp", o->temperature, "Sampling temperature; 0 = greedy")->capture_default_str();
  app->add_option("--top-k", o->top_k, "Keep the k most likely tokens; 0 = off")->capture_default_str();
  app->add_option("--top-p", o->top_p, "Nucleus: smallest set with this probability mass; 1 = off")->capture_default_str();
  app->add_option("--min-p", o->min_p, "Drop tokens below min-p x the top probability; 0 = off")->capture_default_str();
  app->add_option("--repetition-penalty,--repeat-penalty", o->repetition_penalty,
                  "Penalty for tokens already present (Hugging Face rule); 1 = off")
      ->capture_default_str();
  app->add_option("-s,--seed", o->seed, "Random seed; -1 = random (printed)")->capture_default_str();
  app->add_option("--stop", o->stop, "Stop when this text appears (repeatable); the text is cut before it");
  app->add_flag("--ignore-eos", o->ignore_eos, "Keep generating after <|endoftext|>");
  app->add_flag("--logprobs", o->logprobs, "Record log-probabilities of the generated tokens (--json)");
  app->add_flag("--json", o->json, "Print one JSON object (no streaming)");
  app->add_flag("--timings-per-token", o->timings_per_token,
                "With --json: timings.token_ms, when each token index was sampled (ms from the start of "
                "generation), and timings.monotonic_origin_ms, that start on CLOCK_MONOTONIC");
  app->add_flag("--truncate", o->truncate, "Cut prompts longer than the context from the left");
  app->add_flag("--parse-special", o->parse_special, "Parse <|endoftext|> in prompts as the special token");
  app->add_option("--invalid-utf8", o->invalid_utf8, "Prompt bytes that are not UTF-8: error or replace")
      ->check(CLI::IsMember({"error", "replace"}))
      ->capture_default_str();
  app->add_option("--max-len,-c,--ctx-size", o->max_len, "Context length to allocate (default: the model's)")
      ->check(CLI::PositiveNumber);
  add_threads_option(*app, o->threads);
  return {app, [o] { return run_generate(*o); }};
}

}  // namespace eagerlm::cli
