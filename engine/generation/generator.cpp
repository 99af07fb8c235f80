#include "engine/generation/generator.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "engine/core/error.h"
#include "engine/generation/stop_strings.h"

namespace eagerlm {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Everything the loop tracks for one sequence.
struct Sequence {
  size_t index;
  std::vector<int32_t> tokens;  // prompt, then generated
  size_t prompt_len;
  size_t prefilled = 0;         // prompt tokens already in the cache
  Sampler sampler;
  StreamDecoder decoder;
  StopStringMatcher stops;
  GenerationResult result;
  bool done = false;
};

}  // namespace

void GenerationOptions::validate() const {
  if (max_new_tokens < 0)
    throw_error(ErrorCode::kInvalidArgument, "max_new_tokens must be >= 0, got " + std::to_string(max_new_tokens));
  sampling.validate();
}

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::kEos: return "eos";
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kCallback: return "callback";
  }
  return "?";
}

std::vector<GenerationResult> GenerationLoop::generate(const std::vector<std::vector<int32_t>>& prompts,
                                                  const GenerationOptions& options,
                                                  const TokenCallback& on_token) {
  options.validate();
  const auto start = Clock::now();
  timings_ = {};
  const int64_t vocab = model_.vocab_size(), max_len = model_.max_len();
  if (prompts.empty()) return {};
  if (int64_t(prompts.size()) > model_.max_slots())
    throw_error(ErrorCode::kInvalidArgument, std::to_string(prompts.size()) + " prompts exceed max_batch " +
                                                 std::to_string(model_.max_slots()));
  std::vector<std::unique_ptr<Sequence>> seqs;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const auto& p = prompts[i];
    if (p.empty()) throw_error(ErrorCode::kInvalidArgument, "prompt " + std::to_string(i) + " is empty");
    if (int64_t(p.size()) > max_len)
      throw_error(ErrorCode::kInvalidArgument, "prompt " + std::to_string(i) + " has " + std::to_string(p.size()) +
                                                   " tokens; the maximum length is " + std::to_string(max_len));
    seqs.push_back(std::unique_ptr<Sequence>(new Sequence{i, p, p.size(), 0, Sampler(options.sampling, i),
                                                          StreamDecoder(tokenizer_), StopStringMatcher(options.stop),
                                                          {}, false}));
    timings_.prompt_tokens += int64_t(p.size());
  }

  std::vector<float> scratch(options.logprobs ? size_t(vocab) : 0);
  auto finish = [&](Sequence& s, FinishReason why) {
    s.done = true;
    s.result.finish_reason = why;
    std::string tail = s.stops.stopped() ? std::string() : s.stops.push(s.decoder.finish());
    if (!s.stops.stopped()) tail += s.stops.finish();
    if (on_token && !tail.empty()) on_token(s.index, -1, tail);
    s.result.text = s.stops.text();
  };
  // Appends the next token of `s` and applies every stopping rule.
  auto accept_token = [&](Sequence& s, int32_t token, float logprob) {
    s.tokens.push_back(token);
    s.result.ids.push_back(token);
    if (options.logprobs) s.result.logprobs.push_back(logprob);
    ++timings_.generated_tokens;
    if (token == options.eos_id && !options.ignore_eos) return finish(s, FinishReason::kEos);
    const std::string visible = s.stops.push(s.decoder.push(token));
    const bool keep_going = !on_token || on_token(s.index, token, visible);
    if (s.stops.stopped()) return finish(s, FinishReason::kStop);
    if (!keep_going) return finish(s, FinishReason::kCallback);
    if (int64_t(s.result.ids.size()) >= options.max_new_tokens || int64_t(s.tokens.size()) >= max_len)
      return finish(s, FinishReason::kLength);
  };
  // Samples the next token of `s` on the host from its logits row.
  auto take_token = [&](Sequence& s, float* logits) {
    if (options.logprobs) std::copy(logits, logits + vocab, scratch.begin());
    const int32_t token = s.sampler.sample(logits, vocab, s.tokens);
    accept_token(s, token, options.logprobs ? log_softmax_at(scratch.data(), vocab, token) : 0.0f);
  };
  // Where the model samples on its device, only the chosen ids come back: each sequence draws
  // from its own stream (its index), its n-th token with draw number n.
  const bool on_device = model_.samples_on_device();
  std::vector<SampleRequest> requests;
  auto request = [&](const Sequence& s, bool wanted) {
    requests.push_back({wanted, uint64_t(s.index), uint64_t(s.result.ids.size())});
  };

  for (auto& s : seqs)
    if (options.max_new_tokens == 0) finish(*s, FinishReason::kLength);

  // Prefill: pack prompt chunks into steps of at most max_step_rows tokens.
  const auto prefill_start = Clock::now();
  std::vector<SequenceStep> step;
  std::vector<Sequence*> in_step;
  for (;;) {
    step.clear();
    in_step.clear();
    int64_t rows = 0;
    requests.clear();
    for (auto& s : seqs) {
      if (s->done || s->prefilled == s->prompt_len || rows == model_.max_step_rows()) continue;
      const int64_t n = std::min<int64_t>(int64_t(s->prompt_len - s->prefilled), model_.max_step_rows() - rows);
      step.push_back({int32_t(s->index), int32_t(s->prefilled), s->tokens.data() + s->prefilled, int32_t(n)});
      in_step.push_back(s.get());
      request(*s, s->prefilled + size_t(n) == s->prompt_len);
      rows += n;
    }
    if (step.empty()) break;
    const SampledToken* sampled = nullptr;
    float* logits = nullptr;
    if (on_device)
      sampled = model_.step_and_sample(step, requests, options.sampling, options.logprobs);
    else
      logits = const_cast<float*>(model_.step(step));
    for (size_t k = 0; k < in_step.size(); ++k) {
      Sequence& s = *in_step[k];
      s.prefilled += size_t(step[k].n_tokens);
      if (s.prefilled == s.prompt_len) {
        if (on_device)
          accept_token(s, sampled[k].id, sampled[k].logprob);
        else
          take_token(s, logits + int64_t(k) * vocab);
        if (timings_.first_token_ms == 0) timings_.first_token_ms = ms_since(start);
      }
    }
  }
  timings_.prefill_ms = ms_since(prefill_start);

  // Decode: one token per live sequence per step.
  const auto decode_start = Clock::now();
  for (;;) {
    step.clear();
    in_step.clear();
    requests.clear();
    for (auto& s : seqs) {
      if (s->done) continue;
      step.push_back({int32_t(s->index), int32_t(s->tokens.size() - 1), &s->tokens.back(), 1});
      in_step.push_back(s.get());
      request(*s, true);
    }
    if (step.empty()) break;
    if (on_device) {
      const SampledToken* sampled = model_.step_and_sample(step, requests, options.sampling, options.logprobs);
      ++timings_.decode_steps;
      for (size_t k = 0; k < in_step.size(); ++k) accept_token(*in_step[k], sampled[k].id, sampled[k].logprob);
      continue;
    }
    float* logits = const_cast<float*>(model_.step(step));
    ++timings_.decode_steps;
    for (size_t k = 0; k < in_step.size(); ++k) take_token(*in_step[k], logits + int64_t(k) * vocab);
  }
  if (timings_.decode_steps > 0) timings_.decode_ms_per_token = ms_since(decode_start) / double(timings_.decode_steps);
  timings_.total_ms = ms_since(start);

  std::vector<GenerationResult> out;
  for (auto& s : seqs) out.push_back(std::move(s->result));
  return out;
}

}  // namespace eagerlm
