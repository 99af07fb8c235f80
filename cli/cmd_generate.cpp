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

#include "cli/cli_common.h"
#include "cli/interrupt.h"
#include "cli/commands.h"
#include "cli/model_source.h"
#include "engine/core/error.h"
#include "engine/generation/generator.h"
#include "engine/generation/prompts.h"
#include "engine/tokenizer/token_ids.h"
#include "models/gpt2/gpt2_step_model.h"

namespace eagerlm::cli {

namespace {

struct GenerateFlags {
  ModelFlags source;
  std::string prompt, prompt_file_whole, prompt_file_lines, prompt_ids;
  bool prompt_given = false;
  int32_t max_new_tokens = 128, min_new_tokens = 0;
  float temperature = 0.8f, top_p = 0.95f, min_p = 0.05f, repetition_penalty = 1.0f;
  float presence_penalty = 0.0f, frequency_penalty = 0.0f;
  int32_t top_k = 40, no_repeat_ngram_size = 0, top_logprobs = 0, samples = 1;
  std::string logit_bias, stop_token_ids;
  int32_t num_beams = 1, num_return_sequences = 1;
  float length_penalty = 1.0f;
  bool early_stopping = false;
  int64_t seed = -1;
  std::vector<std::string> stop;
  bool ignore_eos = false, logprobs = false, json = false, truncate = false, parse_special = false;
  bool timings_per_token = false;
  std::string invalid_utf8 = "error";
  int threads = 0;
  int64_t max_len = 0;
};


// The engine's options from the flags, checked by the engine's own rules; an out-of-range value
// is a usage error naming the flag.
// --logit-bias "ID:BIAS,ID:BIAS": the pairs, strictly parsed (range checks are the engine's).
std::vector<std::pair<int32_t, float>> parse_logit_bias(const std::string& text) {
  std::vector<std::pair<int32_t, float>> out;
  if (text.empty()) return out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    const size_t colon = item.find(':');
    size_t used_id = 0, used_bias = 0;
    long long id = -1;
    float bias = 0;
    bool ok = colon != std::string::npos && colon > 0 && colon + 1 < item.size();
    if (ok) {
      try {
        const std::string id_text = item.substr(0, colon), bias_text = item.substr(colon + 1);
        id = std::stoll(id_text, &used_id);
        bias = std::stof(bias_text, &used_bias);
        ok = used_id == id_text.size() && used_bias == bias_text.size() && id >= 0 && id <= INT32_MAX &&
             std::isfinite(bias);
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if (!ok) throw UsageError("--logit-bias: expected ID:BIAS pairs separated by commas (e.g. 50256:-100), got '" + item + "'");
    out.push_back({int32_t(id), bias});
  }
  return out;
}

// The engine's options from the flags, checked by the engine's own rules; an out-of-range value
// is a usage error naming the flag. seed: unset for a random one (drawn by the engine).
GenerationOptions generation_options(const GenerateFlags& o) {
  if (o.seed < -1)
    throw UsageError("-s/--seed: expected an integer >= 0, or -1 for a random seed, got " + std::to_string(o.seed));
  GenerationOptions g;
  g.max_new_tokens = o.max_new_tokens;
  g.min_new_tokens = o.min_new_tokens;
  g.sampling.temperature = o.temperature;
  g.sampling.top_k = o.top_k;
  g.sampling.top_p = o.top_p;
  g.sampling.min_p = o.min_p;
  g.sampling.repetition_penalty = o.repetition_penalty;
  g.sampling.presence_penalty = o.presence_penalty;
  g.sampling.frequency_penalty = o.frequency_penalty;
  g.sampling.no_repeat_ngram_size = o.no_repeat_ngram_size;
  g.sampling.logit_bias = parse_logit_bias(o.logit_bias);
  if (o.seed >= 0) g.sampling.seed = uint64_t(o.seed);
  g.stop = o.stop;
  try {
    if (!o.stop_token_ids.empty()) g.stop_token_ids = parse_token_ids(o.stop_token_ids, INT32_MAX, "--stop-token-ids");
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  g.ignore_eos = o.ignore_eos;
  g.logprobs = o.logprobs;
  g.top_logprobs = o.top_logprobs;
  g.n = o.samples;
  g.beams.num_beams = o.num_beams;
  g.beams.length_penalty = o.length_penalty;
  g.beams.early_stopping = o.early_stopping;
  g.beams.num_return_sequences = o.num_return_sequences;
  // Beam search is deterministic: the sampling defaults of this command do not apply to it.
  if (o.num_beams > 1) g.sampling.temperature = 0.0f;
  validate_as_flags(g);
  return g;
}

struct Prompts {
  std::vector<std::string> texts;
  std::vector<std::vector<int32_t>> ids;
};

Prompts read_prompts(const GenerateFlags& o, const Tokenizer& tok, const std::string& text_problem, int64_t context,
                     int32_t eos) {
  Prompts p;
  if (!o.prompt_ids.empty()) {
    try {
      p.ids.push_back(parse_token_ids(o.prompt_ids, tok.vocab_size(), "--prompt-ids"));
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
    if (p.ids.back().empty()) throw UsageError("--prompt-ids: expected at least one token id");
    p.texts.push_back(tok.decode(p.ids.back()));
  } else if (!o.prompt_file_lines.empty()) {
    std::stringstream ss(read_text_file(o.prompt_file_lines, "--prompt-file"));
    for (std::string line; std::getline(ss, line);) p.texts.push_back(line);
    if (p.texts.empty()) throw UsageError("--prompt-file: '" + o.prompt_file_lines + "' has no prompts");
  } else if (!o.prompt_file_whole.empty()) {
    p.texts.push_back(read_text_file(o.prompt_file_whole, "-f/--file"));
  } else {
    p.texts.push_back(o.prompt);
  }
  EncodeOptions enc;
  enc.parse_special = o.parse_special;
  enc.invalid_utf8 = invalid_utf8_mode(o.invalid_utf8);
  if (p.ids.empty()) {
    if (!text_problem.empty()) throw UsageError(text_problem + " (--prompt-ids)");
    p.ids = encode_prompts(tok, p.texts, enc, eos);
  }
  for (size_t i = 0; i < p.ids.size(); ++i) {
    auto& ids = p.ids[i];
    if (int64_t(ids.size()) <= context) continue;
    if (!o.truncate)
      throw UsageError("prompt " + std::to_string(i) + " has " + std::to_string(ids.size()) +
                       " tokens, more than the context of " + std::to_string(context) +
                       " (shorten it, or pass --truncate to keep its last " + std::to_string(context) + ")");
    std::fprintf(stderr, "eagerlm: prompt %zu truncated from the left: %zu -> %lld tokens\n", i, ids.size(),
                 (long long)context);
    ids.erase(ids.begin(), ids.end() - context);
  }
  return p;
}

int run_generate(GenerateFlags& o) {
  // From here on SIGINT/SIGTERM stop the generation at the next token; what exists is printed
  // (JSON included) and the exit status says which signal it was.
  const InterruptGuard interrupts;
  GenerationOptions g = generation_options(o);  // flag errors before loading
  const uint64_t seed = resolve_seed(g.sampling);  // the engine's rule for an unset seed
  gpt2::ForwardLimits limits = execution_limits(o.source);
  apply_threads(o.threads);
  gpt2::LoadedModel lm = load_model(o.source, o.json);
  const gpt2::Config& cfg = lm.model->config();
  if (o.max_len > cfg.n_positions)
    throw UsageError("--max-len: " + std::to_string(o.max_len) +
                     " exceeds the model's context (n_positions = " + std::to_string(cfg.n_positions) + ")");
  const int64_t context = o.max_len > 0 ? o.max_len : cfg.n_positions;
  Prompts prompts = read_prompts(o, lm.tokenizer, lm.text_problem, context, int32_t(cfg.eos_token_id));

  size_t longest = 0;
  for (const auto& p : prompts.ids) longest = std::max(longest, p.size());
  const size_t per_prompt = size_t(g.result_count());
  limits.max_slots = int64_t(prompts.ids.size()) * g.slots_needed();
  limits.max_len = std::min<int64_t>(context, int64_t(longest) + std::max(o.max_new_tokens, 1));
  gpt2::Gpt2StepModel step_model(lm.model, limits);

  g.eos_id = int32_t(cfg.eos_token_id);
  g.sampling.vocab_limit = gpt2::sampling_vocab(cfg, lm.tokenizer);

  const bool stream = !o.json && prompts.ids.size() == 1 && per_prompt == 1;
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
  std::vector<size_t> tokens_seen(prompts.ids.size() * per_prompt, 0);
  timespec origin_ts{};
  clock_gettime(CLOCK_MONOTONIC, &origin_ts);
  const auto origin = std::chrono::steady_clock::now();
  const TokenCallback on_token = [&, stream](size_t prompt, const StreamEvent& e) {
      const size_t index = prompt * per_prompt + size_t(e.sample);
      if (o.timings_per_token && e.token >= 0 && tokens_seen[index]++ == token_ms.size()) {
        const auto elapsed = std::chrono::steady_clock::now() - origin;
        token_ms.push_back(std::chrono::duration<double, std::milli>(elapsed).count());
      }
      if (stream) {
        std::fwrite(e.text.data(), 1, e.text.size(), stdout);
        std::fflush(stdout);
      }
      return InterruptGuard::received() == 0;
    };
  // Interrupted before the first step (while loading): nothing generated, every prompt "interrupted".
  std::vector<GenerationResult> results(prompts.ids.size() * per_prompt);
  if (InterruptGuard::received() == 0) results = gen.generate(prompts.ids, g, on_token);
  const GenerationTimings& t = gen.timings();
  const bool interrupted = InterruptGuard::received() != 0;
  const auto finish_name = [&](const GenerationResult& r) -> std::string {
    return interrupted && (r.finish_reason == FinishReason::kCallback || r.ids.empty())
               ? "interrupted" : finish_reason_name(r.finish_reason);
  };
  const int status = interrupted ? InterruptGuard::exit_status() : 0;

  if (o.json) {
    nlohmann::json out = {{"model", lm.description}, {"seed", seed}, {"results", nlohmann::json::array()}};
    for (size_t k = 0; k < results.size(); ++k) {
      const GenerationResult& g_k = results[k];
      const size_t i = k / per_prompt;
      nlohmann::json r = {{"prompt", prompts.texts[i]},
                          {"prompt_ids", prompts.ids[i]},
                          {"ids", g_k.ids},
                          {"text", g_k.text},
                          {"finish_reason", finish_name(g_k)}};
      if (per_prompt > 1) r["sample"] = k % per_prompt;
      if (o.logprobs) r["logprobs"] = g_k.logprobs;
      if (o.top_logprobs > 0) {
        nlohmann::json top = nlohmann::json::array();
        for (const auto& alternatives : g_k.top_logprobs) {
          nlohmann::json at = nlohmann::json::array();
          for (const TokenLogprob& a : alternatives) at.push_back({{"id", a.id}, {"logprob", a.logprob}});
          top.push_back(at);
        }
        r["top_logprobs"] = top;
      }
      if (o.num_beams > 1) r["score"] = g_k.score;
      const RequestTimings& t_k = g_k.timings;
      r["timings"] = {{"prefill_ms", t_k.prefill_ms},
                      {"first_token_ms", t_k.first_token_ms},
                      {"decode_ms_per_token", t_k.decode_ms_per_token},
                      {"total_ms", t_k.total_ms},
                      {"cached_prompt_tokens", t_k.cached_prompt_tokens},
                      {"generated_tokens", t_k.generated_tokens}};
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
    return status;
  }
  if (stream) {
    std::fputc('\n', stdout);
  } else {
    for (size_t k = 0; k < results.size(); ++k)
      std::printf("%s%s\n%s", prompts.texts[k / per_prompt].c_str(), results[k].text.c_str(),
                  k + 1 < results.size() ? "\n" : "");
  }
  std::fflush(stdout);
  std::fprintf(stderr,
               "eagerlm: load %.0f ms | prompt %lld tokens, prefill %.1f ms (%.0f tokens/s) | first token %.1f ms | "
               "decode %.2f ms/token | %lld tokens, %.1f tokens/s\n",
               lm.load_ms, (long long)t.prompt_tokens, t.prefill_ms,
               t.prefill_ms > 0 ? double(t.prompt_tokens) * 1000.0 / t.prefill_ms : 0.0, t.first_token_ms,
               t.decode_ms_per_token, (long long)t.generated_tokens, t.tokens_per_second());
  for (size_t k = 0; k < results.size(); ++k)
    if (results[k].finish_reason == FinishReason::kLength && int64_t(results[k].ids.size()) < o.max_new_tokens)
      std::fprintf(stderr, "eagerlm: prompt %zu stopped at the context length (%lld tokens)\n", k / per_prompt,
                   (long long)limits.max_len);
  if (interrupted) std::fprintf(stderr, "eagerlm: interrupted (signal %d): stopped after the tokens shown\n",
                                InterruptGuard::received());
  return status;
}

}  // namespace

Subcommand add_generate_command(CLI::App& root) {
  auto o = std::make_shared<GenerateFlags>();
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
  app->add_option("--top-p", o->top_p, "Nucleus: smallest set with this probability mass; 1 = off")
      ->capture_default_str();
  app->add_option("--min-p", o->min_p, "Drop tokens below min-p x the top probability; 0 = off")->capture_default_str();
  app->add_option("--repetition-penalty,--repeat-penalty", o->repetition_penalty,
                  "Penalty for tokens already present (Hugging Face rule); 1 = off")
      ->capture_default_str();
  app->add_option("--presence-penalty", o->presence_penalty,
                  "OpenAI's: subtract this from tokens already generated; 0 = off")
      ->capture_default_str();
  app->add_option("--frequency-penalty", o->frequency_penalty,
                  "OpenAI's: subtract this times each token's count so far; 0 = off")
      ->capture_default_str();
  app->add_option("--logit-bias", o->logit_bias, "Add to token logits: ID:BIAS[,ID:BIAS...], bias in [-100, 100]");
  app->add_option("--no-repeat-ngram-size", o->no_repeat_ngram_size, "Never repeat an n-gram of this size; 0 = off")
      ->capture_default_str();
  app->add_option("--min-new-tokens", o->min_new_tokens, "Suppress end-of-text and stop ids before this many tokens")
      ->capture_default_str();
  app->add_option("-s,--seed", o->seed, "Random seed; -1 = random (printed)")->capture_default_str();
  app->add_option("--stop", o->stop, "Stop when this text appears (repeatable); the text is cut before it");
  app->add_option("--stop-token-ids", o->stop_token_ids, "Comma-separated ids that end a result like <|endoftext|>");
  app->add_flag("--ignore-eos", o->ignore_eos, "Keep generating after <|endoftext|>");
  app->add_flag("--logprobs", o->logprobs, "Record log-probabilities of the generated tokens (--json)");
  app->add_option("--top-logprobs", o->top_logprobs, "Also record the N most likely tokens at each step (--json)")
      ->capture_default_str();
  app->add_option("--num-samples", o->samples, "Results per prompt: independent samples sharing one prefill")
      ->capture_default_str();
  app->add_option("--num-beams", o->num_beams, "Beam search with this many beams (Hugging Face's); 1 = off")
      ->capture_default_str();
  app->add_option("--length-penalty", o->length_penalty, "Beam score = sum of logprobs / length^this")
      ->capture_default_str();
  app->add_flag("--early-stopping", o->early_stopping, "Beam search ends once num-beams hypotheses are finished");
  app->add_option("--num-return-sequences", o->num_return_sequences, "Beams returned per prompt (<= --num-beams)")
      ->capture_default_str();
  app->add_flag("--json", o->json, "Print one JSON object (no streaming)");
  app->add_flag("--timings-per-token", o->timings_per_token,
                "With --json: timings.token_ms, when each token index was sampled (ms from the start of "
                "generation), and timings.monotonic_origin_ms, that start on CLOCK_MONOTONIC");
  app->add_flag("--truncate", o->truncate, "Cut prompts longer than the context from the left");
  app->add_flag("--parse-special", o->parse_special, "Parse <|endoftext|> in prompts as the special token");
  add_invalid_utf8_option(*app, o->invalid_utf8);
  app->add_option("--max-len,-c,--ctx-size", o->max_len, "Context length to allocate (default: the model's)")
      ->check(CLI::PositiveNumber);
  add_threads_option(*app, o->threads);
  return {app, [o] { return run_generate(*o); }};
}

}  // namespace eagerlm::cli
