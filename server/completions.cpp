#include "server/completions.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "server/api_error.h"
#include "server/completion_format.h"
#include "server/http_transport.h"

namespace eagerlm::server {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

std::string completion_id() {
  static std::mutex mutex;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard<std::mutex> lock(mutex);
  char id[32];
  std::snprintf(id, sizeof id, "cmpl-%016llx%08llx", (unsigned long long)rng(), (unsigned long long)(rng() >> 32));
  return id;
}

// An engine error as the client sees it. The engine names its own options; the client's field
// names are OpenAI's.
ApiError from_engine(const Error& e) {
  const std::string message = e.what();
  if (e.code() == ErrorCode::kBusy) {
    ApiError busy(503, "the server is busy: " + message + "; retry later", {}, "server_busy");
    busy.retry_after_s = 1;
    return busy;
  }
  if (e.code() == ErrorCode::kInvalidArgument) {
    static const std::pair<const char*, const char*> names[] = {
        {"max_new_tokens", "max_tokens"}, {"top_logprobs", "logprobs"}, {"min_new_tokens", "min_tokens"},
        {"n", "n"}, {"temperature", "temperature"}, {"top_p", "top_p"}, {"top_k", "top_k"}, {"min_p", "min_p"},
        {"repetition_penalty", "repetition_penalty"}, {"presence_penalty", "presence_penalty"},
        {"frequency_penalty", "frequency_penalty"}, {"logit_bias", "logit_bias"}, {"stop", "stop"},
        {"stop_token_ids", "stop_token_ids"}, {"the prompt", "prompt"}, {"prompt", "prompt"}};
    for (const auto& [engine_name, field] : names)
      if (message.rfind(engine_name, 0) == 0) return ApiError(400, message, field);
    return ApiError(400, message);
  }
  return ApiError(500, std::string("generation failed: ") + message);
}

// log p and the most likely alternatives of each prompt token after the first, from the model's
// logits (echo with logprobs). A forward pass of its own, one at a time: it holds
// prompt tokens x vocabulary floats.
struct PromptScores {
  std::vector<float> logprobs;                      // [i - 1] for token i
  std::vector<std::vector<TokenLogprob>> top;
};

PromptScores score_prompt(const Model& model, const std::vector<int32_t>& ids, size_t top_n) {
  static std::mutex one_at_a_time;
  std::lock_guard<std::mutex> lock(one_at_a_time);
  PromptScores out;
  if (ids.size() < 2) return out;
  const size_t vocab = model.info().vocab_size;
  const std::vector<float> logits = model.logits(std::vector<int32_t>(ids.begin(), ids.end() - 1));
  std::vector<size_t> order(vocab);
  for (size_t i = 1; i < ids.size(); ++i) {
    const float* row = logits.data() + (i - 1) * vocab;
    const float max = *std::max_element(row, row + vocab);
    double sum = 0;
    for (size_t v = 0; v < vocab; ++v) sum += std::exp(double(row[v]) - max);
    const double log_z = double(max) + std::log(sum);
    out.logprobs.push_back(float(double(row[size_t(ids[i])]) - log_z));
    std::vector<TokenLogprob> top;
    if (top_n > 0) {
      for (size_t v = 0; v < vocab; ++v) order[v] = v;
      std::partial_sort(order.begin(), order.begin() + long(top_n), order.end(),
                        [&](size_t a, size_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
      for (size_t k = 0; k < top_n; ++k) top.push_back({int32_t(order[k]), float(double(row[order[k]]) - log_z)});
    }
    out.top.push_back(std::move(top));
  }
  return out;
}

class CompletionJob {
 public:
  CompletionJob(Service& s, CompletionRequest r, Clock::time_point arrived)
      : s_(s), model_(*s.model), r_(std::move(r)), arrived_(arrived), id_(completion_id()), created_(std::time(nullptr)) {
    const size_t n = r_.options.n;
    for (size_t p = 0; p < r_.prompts.size(); ++p)
      for (size_t k = 0; k < n; ++k) choices_.emplace_back(model_);
    if (r_.echo && r_.logprobs)
      for (const auto& ids : r_.prompts) prompt_scores_.push_back(score_prompt(model_, ids, *r_.logprobs));
  }

  ~CompletionJob() {
    cancel();
    release_places();
  }

  void submit() {
    reserve_places();
    try {
      for (const auto& ids : r_.prompts) requests_.push_back(s_.engine->submit_tokens(ids, r_.options));
    } catch (const Error& e) {
      cancel();
      throw from_engine(e);
    }
  }

  void cancel() {
    for (const auto& r : requests_) r->cancel();
  }

  // The whole response body (stream: false).
  std::string run() {
    if (r_.echo)
      for (size_t c = 0; c < choices_.size(); ++c) add_prompt_logprobs(c);
    if (!pump([](size_t, const StreamedToken&) { return true; })) throw gone_error();
    results_ = collect();
    release_places();
    const std::vector<std::vector<Result>>& results = results_;
    nlohmann::json body = completion_object(id_, created_, r_.model);
    for (size_t c = 0; c < choices_.size(); ++c) {
      const Result& result = results[c / r_.options.n][c % r_.options.n];
      Choice& choice = choices_[c];
      for (size_t i = 0; i < result.ids.size(); ++i) add_generated_logprob(choice, result, i);
      const std::string text = (r_.echo ? r_.prompt_texts[c / r_.options.n] : std::string()) + result.text;
      nlohmann::json j = choice_object(c, text, r_.logprobs ? choice.logprobs.all() : nlohmann::json(nullptr),
                                       openai_finish_reason(result.finish_reason));
      if (r_.return_token_ids) {
        j["prompt_token_ids"] = r_.prompts[c / r_.options.n];
        j["token_ids"] = result.ids;
      }
      body["choices"].push_back(std::move(j));
    }
    body["usage"] = usage();
    finish_metrics();
    return json_text(body);
  }

  // The event stream (stream: true); false when the client went away or generation failed.
  bool stream(httplib::DataSink& sink) {
    s_.metrics.stream_opened();
    bool ok = false;
    try {
      ok = stream_events(sink);
    } catch (const std::exception& e) {
      cancel();
      write_event(sink, nlohmann::json::parse(error_body(500, std::string("streaming failed: ") + e.what())));
    }
    s_.metrics.stream_closed();
    return ok;
  }

 private:
  struct Choice {
    explicit Choice(const Model& m) : logprobs(m) {}
    LegacyLogprobs logprobs;
    size_t streamed_ids = 0;  // generated ids already in the logprobs (streamed)
    bool started = false;
    Clock::time_point last;
  };

  // One place per prompt among the parallel + max_queue the server takes at a time; none: 503.
  void reserve_places() {
    const size_t want = r_.prompts.size(), limit = s_.options.parallel + s_.options.max_queue;
    size_t now = s_.admitted.load();
    do {
      if (now + want > limit) {
        ApiError busy(503, "the server is busy: " + std::to_string(now) + " requests are running or queued (" +
                               std::to_string(s_.options.parallel) + " slots, --max-queue " +
                               std::to_string(s_.options.max_queue) + "); retry later",
                      {}, "server_busy");
        busy.retry_after_s = 1;
        throw busy;
      }
    } while (!s_.admitted.compare_exchange_weak(now, now + want));
    reserved_ = want;
  }

  // Once every engine request is done (before the last bytes go out, so that a client that read
  // them finds the place free).
  void release_places() { s_.admitted -= std::exchange(reserved_, 0); }

  ApiError gone_error() const {
    s_.metrics.client_disconnected();
    return ApiError(499, "the client closed the connection; the request was cancelled", {}, "client_closed_request");
  }

  void add_prompt_logprobs(size_t c) {
    if (!r_.logprobs) return;
    const size_t p = c / r_.options.n;
    const std::vector<int32_t>& ids = r_.prompts[p];
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i == 0) {
        choices_[c].logprobs.add(ids[0], std::nullopt, nullptr);
      } else {
        choices_[c].logprobs.add(ids[i], prompt_scores_[p].logprobs[i - 1], &prompt_scores_[p].top[i - 1]);
      }
    }
  }

  void add_generated_logprob(Choice& choice, const Result& result, size_t i) {
    if (!r_.logprobs || i < choice.streamed_ids) return;
    const std::vector<TokenLogprob>* top = i < result.top_logprobs.size() ? &result.top_logprobs[i] : nullptr;
    static const std::vector<TokenLogprob> none;
    choice.logprobs.add(result.ids[i], i < result.logprobs.size() ? result.logprobs[i] : 0.0f, top ? top : &none);
    choice.streamed_ids = i + 1;
  }

  // Pulls every request's tokens until all are done, calling deliver(choice, token) for each;
  // false (everything cancelled) when deliver says so or the client went away.
  template <typename Deliver>
  bool pump(Deliver deliver) {
    const size_t n = r_.options.n;
    std::vector<bool> finished(requests_.size(), false);
    size_t open = requests_.size();
    const auto take = [&](size_t p, const StreamedToken& t) {
      const size_t c = p * n + t.sample;
      if (t.token >= 0) {
        const auto now = Clock::now();
        Choice& choice = choices_[c];
        if (!choice.started) {
          s_.metrics.observe_first_token(seconds_between(arrived_, now));
          choice.started = true;
        } else {
          s_.metrics.observe_inter_token(seconds_between(choice.last, now));
        }
        choice.last = now;
      }
      return deliver(c, t);
    };
    while (open > 0) {
      bool any = false;
      size_t waiting_on = requests_.size();
      for (size_t p = 0; p < requests_.size(); ++p) {
        if (finished[p]) continue;
        Engine::Request& r = *requests_[p];
        const bool done = r.done();  // every token of a done request is queued already
        while (auto t = r.next(std::chrono::milliseconds(0))) {
          any = true;
          if (!take(p, *t)) return cancel(), false;
        }
        if (done) {
          finished[p] = true;
          --open;
        } else if (waiting_on == requests_.size()) {
          waiting_on = p;
        }
      }
      if (open == 0) break;
      if (HttpServer::client_gone()) return cancel(), false;
      if (!any)
        if (auto t = requests_[waiting_on]->next(std::chrono::milliseconds(20)))
          if (!take(waiting_on, *t)) return cancel(), false;
    }
    return true;
  }

  // Each prompt's results; ApiError for a failed or cancelled request.
  std::vector<std::vector<Result>> collect() {
    std::vector<std::vector<Result>> out;
    for (const auto& r : requests_) {
      try {
        out.push_back(r->wait());
      } catch (const Error& e) {
        cancel();
        throw ApiError(500, std::string("generation failed: ") + e.what());
      }
      for (const Result& result : out.back()) {
        if (result.finish_reason != FinishReason::kCancelled) continue;
        ApiError e(503, s_.lifecycle.phase() == Phase::kDraining
                            ? "the server is shutting down: the request was cancelled before it finished"
                            : "the request was cancelled before it finished",
                   {}, "request_cancelled");
        e.retry_after_s = 1;
        throw e;
      }
    }
    return out;
  }

  nlohmann::json usage() const {
    size_t prompt = 0, completion = 0;
    for (const auto& ids : r_.prompts) prompt += ids.size();
    for (const auto& results : results_)
      for (const Result& r : results) completion += r.ids.size();
    return usage_object(prompt, completion);
  }

  void finish_metrics() {
    const nlohmann::json u = usage();
    s_.metrics.add_tokens(u["prompt_tokens"].get<size_t>(), u["completion_tokens"].get<size_t>());
    s_.metrics.observe_request(seconds_between(arrived_, Clock::now()));
  }

  bool write_event(httplib::DataSink& sink, const nlohmann::json& value) {
    const std::string event = sse_event(value);
    return sink.write(event.data(), event.size());
  }

  nlohmann::json chunk(size_t c, const std::string& text, nlohmann::json logprobs, nlohmann::json finish) const {
    nlohmann::json j = completion_object(id_, created_, r_.model);
    j["choices"].push_back(choice_object(c, text, std::move(logprobs), std::move(finish)));
    return j;
  }

  bool stream_events(httplib::DataSink& sink) {
    if (r_.echo) {
      for (size_t c = 0; c < choices_.size(); ++c) {
        add_prompt_logprobs(c);
        nlohmann::json lp = r_.logprobs ? choices_[c].logprobs.take() : nlohmann::json(nullptr);
        if (!write_event(sink, chunk(c, r_.prompt_texts[c / r_.options.n], std::move(lp), nullptr))) return gone();
      }
    }
    const bool per_token = r_.logprobs.has_value() || r_.return_token_ids;
    const bool delivered = pump([&](size_t c, const StreamedToken& t) {
      if (t.text.empty() && !per_token) return true;  // nothing visible yet (held back)
      if (t.text.empty() && t.token < 0) return true;
      Choice& choice = choices_[c];
      nlohmann::json lp = nullptr;
      if (r_.logprobs) {
        if (t.token >= 0) {
          choice.logprobs.add(t.token, t.logprob, &t.top);
          ++choice.streamed_ids;
        }
        lp = choice.logprobs.take();
      }
      nlohmann::json j = chunk(c, t.text, std::move(lp), nullptr);
      if (r_.return_token_ids)
        j["choices"][0]["token_ids"] = t.token >= 0 ? std::vector<int32_t>{t.token} : std::vector<int32_t>{};
      if (t.token >= 0) ++streamed_tokens_[c];
      return write_event(sink, j);
    });
    if (!delivered) return gone();
    try {
      results_ = collect();
    } catch (const ApiError& e) {
      write_event(sink, nlohmann::json::parse(error_body(e)));
      return false;
    }
    release_places();
    // The end of each choice: its finish reason, and the ids nothing was streamed for (the
    // end-of-text or stop id that ended it).
    for (size_t c = 0; c < choices_.size(); ++c) {
      const Result& result = results_[c / r_.options.n][c % r_.options.n];
      nlohmann::json lp = nullptr;
      if (r_.logprobs) {
        for (size_t i = choices_[c].streamed_ids; i < result.ids.size(); ++i) add_generated_logprob(choices_[c], result, i);
        lp = choices_[c].logprobs.take();
      }
      nlohmann::json j = chunk(c, "", std::move(lp), openai_finish_reason(result.finish_reason));
      if (r_.return_token_ids) {
        const size_t streamed = std::min(streamed_tokens_[c], result.ids.size());
        j["choices"][0]["token_ids"] = std::vector<int32_t>(result.ids.begin() + long(streamed), result.ids.end());
      }
      if (!write_event(sink, j)) return gone();
    }
    finish_metrics();
    if (r_.include_usage) {
      nlohmann::json j = completion_object(id_, created_, r_.model);
      j["usage"] = usage();
      if (!write_event(sink, j)) return gone();
    }
    if (!sink.write(kSseDone.data(), kSseDone.size())) return gone();
    sink.done();
    return true;
  }

  bool gone() {
    cancel();
    s_.metrics.client_disconnected();
    return false;
  }

 public:
  void init_stream_state() { streamed_tokens_.assign(choices_.size(), 0); }

 private:
  Service& s_;
  const Model& model_;
  CompletionRequest r_;
  Clock::time_point arrived_;
  std::string id_;
  int64_t created_;
  std::vector<std::shared_ptr<Engine::Request>> requests_;
  std::vector<Choice> choices_;
  std::vector<PromptScores> prompt_scores_;
  std::vector<std::vector<Result>> results_;
  std::vector<size_t> streamed_tokens_;
  size_t reserved_ = 0;  // places held in Service::admitted
};

}  // namespace

void answer_completion(Service& s, CompletionRequest request, httplib::Response& res, Clock::time_point arrived) {
  const bool stream = request.stream;
  auto job = std::make_shared<CompletionJob>(s, std::move(request), arrived);
  job->submit();
  if (!stream) {
    res.set_content(job->run(), "application/json");
    return;
  }
  job->init_stream_state();
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");  // nginx: pass events on as they come
  res.set_chunked_content_provider(
      "text/event-stream", [job](size_t, httplib::DataSink& sink) { return job->stream(sink); },
      [job](bool) { job->cancel(); });
}

}  // namespace eagerlm::server
