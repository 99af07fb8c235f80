// The continuous-batching scheduler over HistoryModel (history_model.h): requests joining and
// leaving at random steps give exactly what each gets alone; cancellation, a full cache, the
// prompt cache, n samples, errors, and the thread-safe AsyncEngine.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <optional>
#include <random>
#include <thread>

#include "engine/core/error.h"
#include "engine/generation/async_engine.h"
#include "engine/generation/scheduler.h"
#include "test/generation/history_model.h"

using namespace eagerlm;
using eagerlm::test::HistoryModel;

namespace {

constexpr int64_t kMaxLen = 96;
constexpr int64_t kRows = 24;

const Tokenizer& tokenizer() {
  static const Tokenizer t = Tokenizer::gpt2();
  return t;
}

// What a request gets with the whole model to itself.
std::vector<GenerationResult> run_alone(const Request& request, const SchedulerOptions& options = {}) {
  HistoryModel model(std::max(request.options.n, request.options.beams.num_beams), kMaxLen, kRows);
  Scheduler s(model, tokenizer(), options);
  Request r = request;
  std::vector<GenerationResult> out;
  r.on_token = {};
  r.on_done = [&](RequestOutcome&& o) {
    REQUIRE(!o.error);
    out = std::move(o.results);
  };
  s.submit(std::move(r));
  s.run_until_idle();
  return out;
}

std::vector<int32_t> random_prompt(std::mt19937& rng, const std::vector<std::vector<int32_t>>& prefixes) {
  std::vector<int32_t> p;
  if (rng() % 2) p = prefixes[rng() % prefixes.size()];  // shared prefixes exercise the prompt cache
  const size_t extra = 1 + rng() % 30;
  for (size_t i = 0; i < extra; ++i) p.push_back(int32_t(rng() % 900));
  return p;
}

Request random_request(std::mt19937& rng, const std::vector<std::vector<int32_t>>& prefixes) {
  Request r;
  r.prompt = random_prompt(rng, prefixes);
  GenerationOptions& o = r.options;
  o.max_new_tokens = int32_t(1 + rng() % 40);
  o.eos_id = 999;
  o.n = rng() % 4 == 0 ? int32_t(2 + rng() % 2) : 1;
  if (rng() % 3) {
    o.sampling.temperature = 0.5f + float(rng() % 100) / 100.0f;
    o.sampling.top_k = int32_t(rng() % 6);
  }
  o.sampling.seed = rng();
  if (rng() % 4 == 0) o.sampling.repetition_penalty = 1.3f;
  if (rng() % 4 == 0) o.sampling.presence_penalty = 0.5f, o.sampling.frequency_penalty = 0.3f;
  if (rng() % 5 == 0) o.stop_token_ids = {int32_t(rng() % 900)};
  if (rng() % 5 == 0) o.logprobs = true, o.top_logprobs = 3;
  return r;
}

void check_same(const GenerationResult& got, const GenerationResult& want, const std::string& what) {
  INFO(what);
  CHECK(got.ids == want.ids);
  CHECK(got.finish_reason == want.finish_reason);
  CHECK(got.logprobs == want.logprobs);
  CHECK(got.text == want.text);
  REQUIRE(got.top_logprobs.size() == want.top_logprobs.size());
  for (size_t i = 0; i < got.top_logprobs.size(); ++i) {
    REQUIRE(got.top_logprobs[i].size() == want.top_logprobs[i].size());
    for (size_t j = 0; j < got.top_logprobs[i].size(); ++j) {
      CHECK(got.top_logprobs[i][j].id == want.top_logprobs[i][j].id);
      CHECK(got.top_logprobs[i][j].logprob == want.top_logprobs[i][j].logprob);
    }
  }
}

}  // namespace

TEST_CASE("requests joining and leaving at random steps get what each gets alone", "[scheduler]") {
  const uint32_t seed = GENERATE(1u, 2u, 3u);
  std::mt19937 rng(seed);
  const std::vector<std::vector<int32_t>> prefixes = {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {40, 41, 42}};
  SchedulerOptions options;
  options.prefill_chunk = 8;
  HistoryModel model(6, kMaxLen, kRows);
  Scheduler s(model, tokenizer(), options);

  constexpr int kRequests = 150;
  std::vector<Request> sent;
  std::vector<std::vector<GenerationResult>> got(kRequests);
  std::vector<bool> cancelled(kRequests, false);
  std::vector<RequestId> ids;
  std::vector<std::string> streamed(size_t(kRequests) * 4);
  int next = 0, step = 0;
  while (next < kRequests || !s.idle()) {
    // A few arrivals at random steps (sometimes a burst, sometimes none).
    const int arrivals = next < kRequests ? int(rng() % 4 == 0 ? rng() % 5 : 0) + (step % 7 == 0) : 0;
    for (int a = 0; a < arrivals && next < kRequests; ++a, ++next) {
      Request r = random_request(rng, prefixes);
      sent.push_back(r);
      const int k = next;
      r.on_token = [&, k](const StreamEvent& e) {
        streamed[size_t(k) * 4 + size_t(e.sample)] += std::string(e.text);
        return true;
      };
      r.on_done = [&, k](RequestOutcome&& o) {
        REQUIRE(!o.error);
        got[size_t(k)] = std::move(o.results);
      };
      ids.push_back(s.submit(std::move(r)));
    }
    // Now and then a running or queued request is cancelled.
    if (!ids.empty() && rng() % 23 == 0) {
      const size_t k = rng() % ids.size();
      if (s.cancel(ids[k])) cancelled[k] = true;
    }
    s.step();
    ++step;
  }
  REQUIRE(int(sent.size()) == kRequests);
  for (int k = 0; k < kRequests; ++k) {
    const auto alone = run_alone(sent[size_t(k)], options);
    REQUIRE(got[size_t(k)].size() == alone.size());
    for (size_t i = 0; i < alone.size(); ++i) {
      const std::string what = "request " + std::to_string(k) + " result " + std::to_string(i);
      const GenerationResult& g = got[size_t(k)][i];
      if (cancelled[size_t(k)] && g.finish_reason == FinishReason::kCancelled) {
        // Cut short: what it got is the start of what it would have got.
        INFO(what);
        REQUIRE(g.ids.size() <= alone[i].ids.size());
        CHECK(std::equal(g.ids.begin(), g.ids.end(), alone[i].ids.begin()));
        continue;
      }
      check_same(g, alone[i], what);
      CHECK(streamed[size_t(k) * 4 + i] == g.text);
    }
  }
  CHECK(s.stats().busy_slots == 0);
  CHECK(s.stats().cached_tokens > 0);  // the shared prefixes were reused
}

TEST_CASE("a full cache queues requests first come, first served; max_queue refuses more", "[scheduler]") {
  HistoryModel model(2, kMaxLen, kRows);
  SchedulerOptions options;
  options.max_queue = 5;
  Scheduler s(model, tokenizer(), options);
  std::vector<std::vector<GenerationResult>> got(5);
  std::vector<int> order;
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> first_done;
  for (int k = 0; k < 5; ++k) {
    Request r;
    r.prompt = {int32_t(10 + k), 5, 6};
    r.options.max_new_tokens = 6;
    r.options.eos_id = 999;
    r.on_done = [&, k](RequestOutcome&& o) {
      if (!first_done) first_done = Clock::now();
      got[size_t(k)] = std::move(o.results);
      order.push_back(k);
    };
    s.submit(std::move(r));
  }
  const Clock::time_point all_submitted = Clock::now();
  CHECK(s.stats().queued == 5);  // nothing admitted before the first step
  Request sixth;
  sixth.prompt = {1};
  try {
    s.submit(sixth);
    FAIL("a sixth request was queued past max_queue");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kBusy);
  }
  s.step();
  CHECK(s.stats().running == 2);
  CHECK(s.stats().queued == 3);
  s.submit(sixth);  // room again
  order.clear();
  s.run_until_idle();
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4});  // (the sixth reports to no one)
  for (int k = 0; k < 5; ++k) {
    REQUIRE(got[size_t(k)].size() == 1);
    CHECK(got[size_t(k)][0].ids.size() == 6);
  }
  // Requests 2-4 waited for a slot: submitted before all_submitted, admitted no earlier than the
  // step after the first request finished (timings from one steady clock, so this is exact).
  REQUIRE(first_done);
  const double least_wait = std::chrono::duration<double, std::milli>(*first_done - all_submitted).count();
  for (int k = 2; k < 5; ++k) CHECK(got[size_t(k)][0].timings.queued_ms >= least_wait);
}

TEST_CASE("cancelling mid-prefill frees the slot at once, and the next request runs", "[scheduler][cancel]") {
  HistoryModel model(1, kMaxLen, kRows);
  SchedulerOptions options;
  options.prefill_chunk = 8;
  Scheduler s(model, tokenizer(), options);
  Request r;
  for (int i = 0; i < 60; ++i) r.prompt.push_back(100 + i);
  r.options.max_new_tokens = 10;
  RequestOutcome outcome;
  bool done = false;
  r.on_done = [&](RequestOutcome&& o) {
    outcome = std::move(o);
    done = true;
  };
  const RequestId id = s.submit(std::move(r));
  // Alone, a prompt goes in steps of max_step_rows; a decoding neighbour would cut it to 8.
  s.step();
  CHECK(s.stats().prefill_tokens == kRows);
  CHECK(s.cancel(id));
  REQUIRE(done);
  REQUIRE(outcome.results.size() == 1);
  CHECK(outcome.results[0].finish_reason == FinishReason::kCancelled);
  CHECK(outcome.results[0].ids.empty());
  CHECK(s.stats().busy_slots == 0);
  CHECK_FALSE(s.cancel(id));  // already gone

  Request next;
  next.prompt = {7, 8, 9};
  next.options.max_new_tokens = 4;
  next.options.eos_id = 999;
  std::vector<GenerationResult> results;
  next.on_done = [&](RequestOutcome&& o) { results = std::move(o.results); };
  const Request copy = next;
  s.submit(std::move(next));
  s.run_until_idle();
  REQUIRE(results.size() == 1);
  check_same(results[0], run_alone(copy)[0], "after the cancelled one");
}

TEST_CASE("a negative prefill_chunk is refused, naming it", "[scheduler]") {
  HistoryModel model(1, kMaxLen, kRows);
  SchedulerOptions options;
  options.prefill_chunk = -1;
  CHECK_THROWS_WITH(Scheduler(model, tokenizer(), options), Catch::Contains("prefill_chunk"));
}

TEST_CASE("a model asking for a prompt chunk below 1 is refused, not clamped", "[scheduler]") {
  HistoryModel model(1, kMaxLen, kRows);
  model.chunk = GENERATE(0, -3);
  CHECK_THROWS_WITH(Scheduler(model, tokenizer(), SchedulerOptions{}),
                    Catch::Contains("model's own prefill_chunk must be >= 1"));
  SchedulerOptions given;  // a chunk in the options never asks the model
  given.prefill_chunk = 4;
  CHECK_NOTHROW(Scheduler(model, tokenizer(), given));
}

TEST_CASE("a long prompt joining running streams delays them by at most one chunk per step", "[scheduler]") {
  HistoryModel model(3, kMaxLen, 64);
  SchedulerOptions options;
  // The chunk given in the options, or left (0) to the model, which asks for 8.
  const bool from_model = GENERATE(false, true);
  INFO((from_model ? "the model's chunk" : "the options' chunk"));
  if (from_model)
    model.chunk = 8;
  else
    options.prefill_chunk = 8;
  Scheduler s(model, tokenizer(), options);
  std::vector<int> tokens_per_step;
  int running_tokens = 0;
  for (int k = 0; k < 2; ++k) {
    Request r;
    r.prompt = {int32_t(1 + k)};
    r.options.max_new_tokens = 30;
    r.options.ignore_eos = true;
    r.on_token = [&](const StreamEvent&) {
      ++running_tokens;
      return true;
    };
    s.submit(std::move(r));
  }
  s.step();
  s.step();  // both decoding
  Request long_one;
  for (int i = 0; i < 60; ++i) long_one.prompt.push_back(200 + i);
  long_one.options.max_new_tokens = 2;
  s.submit(std::move(long_one));
  const int64_t before = model.fed_rows;
  for (int i = 0; i < 8; ++i) {
    const int tokens_before = running_tokens;
    const int64_t rows_before = model.fed_rows;
    s.step();
    CHECK(running_tokens - tokens_before == 2);         // both streams got a token every step
    CHECK(model.fed_rows - rows_before <= 2 + 8);       // their rows plus at most one chunk
  }
  CHECK(model.fed_rows - before >= 60);  // the prompt went through meanwhile
}

TEST_CASE("the prompt cache skips the prefill of a repeated prompt without changing its ids", "[scheduler][cache]") {
  HistoryModel model(2, kMaxLen, kRows);
  Scheduler s(model, tokenizer());
  Request r;
  for (int i = 0; i < 20; ++i) r.prompt.push_back(300 + i);
  r.options.max_new_tokens = 5;
  r.options.eos_id = 999;
  std::vector<GenerationResult> first, second;
  Request a = r, b = r;
  a.on_done = [&](RequestOutcome&& o) { first = std::move(o.results); };
  b.on_done = [&](RequestOutcome&& o) { second = std::move(o.results); };
  s.submit(std::move(a));
  s.run_until_idle();
  const int64_t prefilled = s.stats().prefill_tokens;
  s.submit(std::move(b));
  s.run_until_idle();
  REQUIRE(first.size() == 1);
  REQUIRE(second.size() == 1);
  CHECK(first[0].timings.cached_prompt_tokens == 0);
  CHECK(second[0].timings.cached_prompt_tokens == 19);  // all but the last, whose logits are needed
  CHECK(s.stats().prefill_tokens - prefilled == 1);
  check_same(second[0], first[0], "the repeated prompt");

  // Off, nothing is reused.
  HistoryModel model2(2, kMaxLen, kRows);
  SchedulerOptions off;
  off.prompt_cache = false;
  Scheduler s2(model2, tokenizer(), off);
  for (int k = 0; k < 2; ++k) {
    Request c = r;
    c.on_done = [&](RequestOutcome&& o) { CHECK(o.results[0].timings.cached_prompt_tokens == 0); };
    s2.submit(std::move(c));
    s2.run_until_idle();
  }
  CHECK(s2.stats().cached_tokens == 0);
}

TEST_CASE("n samples prefill once; sample i draws from stream base + i", "[scheduler][n]") {
  HistoryModel model(3, kMaxLen, kRows);
  Scheduler s(model, tokenizer());
  Request r;
  for (int i = 0; i < 30; ++i) r.prompt.push_back(50 + i);
  r.options.n = 3;
  r.options.max_new_tokens = 12;
  r.options.sampling.temperature = 1.0f;
  r.options.sampling.seed = 42;
  r.options.eos_id = 999;
  r.stream_base = 10;
  std::vector<GenerationResult> got;
  Request sent = r;
  sent.on_done = [&](RequestOutcome&& o) { got = std::move(o.results); };
  s.submit(std::move(sent));
  s.run_until_idle();
  REQUIRE(got.size() == 3);
  CHECK(s.stats().prefill_tokens == 30 + 2);  // the prompt once, then each later sample's last token
  CHECK(model.copies == 2);
  for (int i = 0; i < 3; ++i) {
    Request alone = r;
    alone.options.n = 1;
    alone.stream_base = 10 + uint64_t(i);
    check_same(got[size_t(i)], run_alone(alone)[0], "sample " + std::to_string(i));
    CHECK(got[size_t(i)].sample == i);
    CHECK(got[size_t(i)].seed == 42);
  }
  CHECK(got[0].ids != got[1].ids);  // different streams
}

TEST_CASE("options the engine adds: stop ids, min_new_tokens, logit_bias, penalties, top_logprobs", "[scheduler][options]") {
  Request base;
  base.prompt = {1, 2, 3};
  base.options.max_new_tokens = 20;
  base.options.eos_id = 999;
  const auto free_run = run_alone(base)[0];
  REQUIRE(free_run.ids.size() == 20);

  Request stop = base;
  stop.options.stop_token_ids = {free_run.ids[4]};
  const auto stopped_all = run_alone(stop);
  REQUIRE(stopped_all.size() == 1);
  const auto stopped = stopped_all[0];
  const size_t first = size_t(std::find(free_run.ids.begin(), free_run.ids.end(), free_run.ids[4]) - free_run.ids.begin());
  CHECK(stopped.finish_reason == FinishReason::kStop);
  CHECK(stopped.ids == std::vector<int32_t>(free_run.ids.begin(), free_run.ids.begin() + long(first) + 1));

  Request min_new = stop;
  min_new.options.min_new_tokens = int32_t(first) + 2;  // the stop id is suppressed until then
  const auto longer_all = run_alone(min_new);
  REQUIRE(longer_all.size() == 1);
  const auto longer = longer_all[0];
  CHECK(longer.ids.size() >= first + 2);
  for (size_t i = 0; i + 1 < size_t(min_new.options.min_new_tokens) && i < longer.ids.size(); ++i)
    CHECK(longer.ids[i] != free_run.ids[4]);

  Request biased = base;
  biased.options.sampling.logit_bias = {{123, 100.0f}};
  const auto all_biased = run_alone(biased);
  REQUIRE(all_biased.size() == 1);
  CHECK(all_biased[0].ids == std::vector<int32_t>(20, 123));

  Request penalized = biased;
  penalized.options.sampling.presence_penalty = 2.0f;
  penalized.options.sampling.frequency_penalty = 2.0f;
  // -5 + 10 = 5: above every candidate's logit (< 4) until generated once (5 - 2 - 2 = 1).
  penalized.options.sampling.logit_bias = {{123, 10.0f}};
  const auto p = run_alone(penalized)[0];
  REQUIRE(p.ids.size() >= 2);
  CHECK(p.ids[0] == 123);
  CHECK(p.ids[1] != 123);  // the presence penalty took it below the best alternative

  Request top = base;
  top.options.logprobs = true;
  top.options.top_logprobs = 5;
  const auto t = run_alone(top)[0];
  REQUIRE(t.top_logprobs.size() == t.ids.size());
  for (size_t i = 0; i < t.ids.size(); ++i) {
    REQUIRE(t.top_logprobs[i].size() == 5);
    CHECK(t.top_logprobs[i][0].id == t.ids[i]);  // greedy: the chosen token is the most likely
    CHECK(t.top_logprobs[i][0].logprob == t.logprobs[i]);
    for (size_t j = 1; j < 5; ++j) CHECK(t.top_logprobs[i][j].logprob <= t.top_logprobs[i][j - 1].logprob);
  }
}

TEST_CASE("an unset seed is drawn and reported; a given one is kept", "[scheduler][seed]") {
  Request r;
  r.prompt = {1, 2};
  r.options.max_new_tokens = 8;
  r.options.sampling.temperature = 1.0f;
  const auto a = run_alone(r)[0];
  const auto b = run_alone(r)[0];
  CHECK(a.seed != b.seed);  // 2^-64 chance of a false failure
  Request again = r;
  again.options.sampling.seed = a.seed;
  check_same(run_alone(again)[0], a, "the reported seed reproduces the result");
}

TEST_CASE("bad requests are refused at submit, naming what is wrong", "[scheduler][errors]") {
  HistoryModel model(2, 16, kRows);
  Scheduler s(model, tokenizer());
  auto refuse = [&](auto change, const std::string& words) {
    Request r;
    r.prompt = {1, 2};
    change(r);
    try {
      s.submit(r);
      FAIL("accepted a request that should be refused for: " << words);
    } catch (const Error& e) {
      CHECK_THAT(e.what(), Catch::Contains(words));
    }
  };
  refuse([](Request& r) { r.prompt.clear(); }, "empty");
  refuse([](Request& r) { r.prompt.assign(17, 1); }, "17 tokens");
  refuse([](Request& r) { r.prompt = {1000}; }, "vocabulary");
  refuse([](Request& r) { r.options.n = 3; }, "n must be");
  refuse([](Request& r) { r.options.top_logprobs = 21; }, "top_logprobs");
  refuse([](Request& r) { r.options.sampling.logit_bias = {{1000, 1.0f}}; }, "logit_bias");
  refuse([](Request& r) { r.options.sampling.logit_bias = {{5, 101.0f}}; }, "logit_bias");
  refuse([](Request& r) { r.options.sampling.presence_penalty = 3; }, "presence_penalty");
  refuse([](Request& r) { r.options.min_new_tokens = 200; }, "min_new_tokens");
  refuse([](Request& r) { r.options.beams.num_beams = 2, r.options.sampling.temperature = 1; }, "temperature");
  CHECK(model.steps == 0);
  CHECK(s.idle());
}

TEST_CASE("a model error ends the requests of that step; the scheduler goes on", "[scheduler][errors]") {
  struct Failing : HistoryModel {
    using HistoryModel::HistoryModel;
    bool fail = false;
    const float* step(const std::vector<SequenceStep>& seqs) override {
      if (fail) throw Error(ErrorCode::kOutOfMemory, "device lost");
      return HistoryModel::step(seqs);
    }
  } model(2, kMaxLen, kRows);
  Scheduler s(model, tokenizer());
  Request r;
  r.prompt = {1, 2, 3};
  r.options.max_new_tokens = 10;
  r.options.eos_id = 999;
  std::exception_ptr error;
  r.on_done = [&](RequestOutcome&& o) { error = o.error; };
  s.submit(r);
  s.step();
  model.fail = true;
  s.step();
  REQUIRE(error);
  CHECK_THROWS_WITH(std::rethrow_exception(error), Catch::Contains("device lost"));
  CHECK(s.idle());
  // The failed step still counts, as the decode step it was.
  const SchedulerStats st = s.stats();
  CHECK(st.steps == 2);
  CHECK(st.prompt_only.steps == 1);
  CHECK(st.decode_only.steps == 1);
  CHECK(st.decode_only.rows == 1);
  model.fail = false;
  std::vector<GenerationResult> after;
  r.on_done = [&](RequestOutcome&& o) { after = std::move(o.results); };
  s.submit(r);
  s.run_until_idle();
  REQUIRE(after.size() == 1);
  check_same(after[0], run_alone(r)[0], "after the failure");  // nothing stale was reused
}

TEST_CASE("AsyncEngine: submit and cancel from many threads, drain", "[scheduler][async]") {
  HistoryModel model(4, kMaxLen, kRows);
  AsyncEngine engine(model, tokenizer(), SchedulerOptions{});
  constexpr int kThreads = 4, kEach = 12;
  std::vector<Request> sent(kThreads * kEach);
  std::vector<std::vector<GenerationResult>> got(kThreads * kEach);
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(uint32_t(100 + t));
      for (int i = 0; i < kEach; ++i) {
        const int k = t * kEach + i;
        Request r = random_request(rng, {{5, 6, 7}});
        sent[size_t(k)] = r;
        r.on_done = [&, k](RequestOutcome&& o) {
          got[size_t(k)] = std::move(o.results);
          ++done;
        };
        engine.submit(std::move(r));
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2000));
      }
    });
  for (auto& t : threads) t.join();
  engine.drain(std::chrono::milliseconds(60000));
  CHECK(done == kThreads * kEach);
  for (int k = 0; k < kThreads * kEach; ++k) {
    const auto alone = run_alone(sent[size_t(k)]);
    REQUIRE(got[size_t(k)].size() == alone.size());
    for (size_t i = 0; i < alone.size(); ++i) check_same(got[size_t(k)][i], alone[i], "request " + std::to_string(k));
  }
  // Draining: new requests are refused.
  Request late;
  late.prompt = {1};
  CHECK_THROWS_AS(engine.submit(late), Error);
}

TEST_CASE("AsyncEngine: a cancelled request ends with 'cancelled' and frees its slot", "[scheduler][async]") {
  HistoryModel model(1, kMaxLen, kRows);
  AsyncEngine engine(model, tokenizer(), SchedulerOptions{});
  std::atomic<bool> ended{false};
  std::atomic<int> tokens{0};
  FinishReason why = FinishReason::kLength;
  Request r;
  r.prompt = {1, 2, 3};
  r.options.max_new_tokens = 90;
  r.options.ignore_eos = true;
  r.on_token = [&](const StreamEvent&) {
    ++tokens;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return true;
  };
  r.on_done = [&](RequestOutcome&& o) {
    why = o.results.at(0).finish_reason;
    ended = true;
  };
  const Ticket t = engine.submit(std::move(r));
  while (tokens < 3) std::this_thread::yield();
  engine.cancel(t);
  engine.drain(std::chrono::milliseconds(10000));
  CHECK(ended);
  CHECK(why == FinishReason::kCancelled);
  CHECK(tokens < 90);
  CHECK(engine.stats().busy_slots == 0);
}

TEST_CASE("steps are counted by what they carry: decode rows, prompt chunks, or both", "[scheduler][stats]") {
  HistoryModel model(2, kMaxLen, kRows);
  SchedulerOptions options;
  options.prefill_chunk = 4;
  Scheduler s(model, tokenizer(), options);
  auto request = [](int32_t first, int prompt_length, int32_t budget) {
    Request r;
    for (int i = 0; i < prompt_length; ++i) r.prompt.push_back(first + i);
    r.options.max_new_tokens = budget;
    r.options.ignore_eos = true;
    return r;
  };
  // Alone, a 5-token prompt is one step of prompt rows, which also gives the first token.
  s.submit(request(100, 5, 6));
  s.step();
  SchedulerStats st = s.stats();
  CHECK(st.prompt_only.steps == 1);
  CHECK(st.prompt_only.rows == 5);
  // A 10-token prompt beside one decoding stream goes in chunks of 4: three mixed steps of
  // 1 decode row + 4, 4 and 2 prompt rows; then both decode until the first's budget of 6 ends.
  s.submit(request(200, 10, 8));
  for (int k = 0; k < 3; ++k) s.step();
  st = s.stats();
  CHECK(st.mixed.steps == 3);
  CHECK(st.mixed.rows == 3 + 10);
  CHECK(st.decode_only.steps == 0);
  s.run_until_idle();
  st = s.stats();
  // The first request fed 5 decode rows for its 6 tokens (3 of them in the mixed steps), the
  // second 7 for its 8; decode-only steps carry the other 2 + 7 rows, 2 of those steps with both.
  CHECK(st.decode_only.steps == 7);
  CHECK(st.decode_only.rows == 9);
  CHECK(st.prompt_only.steps + st.mixed.steps + st.decode_only.steps == st.steps);
  CHECK(st.prompt_only.rows + st.mixed.rows + st.decode_only.rows == st.prefill_tokens + st.decode_tokens - 2);
  CHECK(st.mixed.model_ms > 0);
  CHECK(st.decode_only.model_ms > 0);
}
