// eagerlm::Engine (continuous batching) through the public API, and the C API's engine: requests
// from several threads give what Generator gives each alone, streaming by callback or by pull,
// cancellation, a full queue, and the new result fields (seed, timings, top_logprobs, n).
#include <catch2/catch.hpp>
#include <eagerlm/eagerlm.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>
#include <thread>

#include "test/library/library_test_support.h"

using namespace eagerlm;
using eagerlm::test::tiny_model;

namespace {

GenerateOptions sampled(uint64_t seed, size_t n = 1) {
  GenerateOptions o;
  o.max_new_tokens = 12;
  o.temperature = 0.9f;
  o.top_k = 50;
  o.seed = seed;
  o.logprobs = true;
  o.n = n;
  return o;
}

}  // namespace

TEST_CASE("Engine: concurrent requests get what Generator gives each alone", "[engine]") {
  const std::vector<std::string> prompts = {"Hello", "The meaning of life is", "A", "Once upon a time there was"};
  EngineSettings settings;
  settings.max_batch = 3;  // fewer slots than requests: some wait
  Engine engine(tiny_model(), settings);
  std::vector<std::shared_ptr<Engine::Request>> requests(prompts.size() * 2);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < prompts.size(); ++i) requests[t * prompts.size() + i] = engine.submit(prompts[i], sampled(40 + i));
    });
  for (auto& t : threads) t.join();
  for (size_t k = 0; k < requests.size(); ++k) {
    const size_t i = k % prompts.size();
    const std::vector<Result> got = requests[k]->wait();
    Generator alone(tiny_model(), 1, 96);
    const Result want = alone.generate(prompts[i], sampled(40 + i));
    REQUIRE(got.size() == 1);
    INFO("request " << k);
    CHECK(got[0].ids == want.ids);
    CHECK(got[0].logprobs == want.logprobs);
    CHECK(got[0].text == want.text);
    CHECK(got[0].seed == 40 + i);
    CHECK(got[0].timings.prompt_tokens == tiny_model().tokenize(prompts[i]).size());
    CHECK(got[0].timings.generated_tokens == got[0].ids.size());
  }
  const EngineStats s = engine.stats();
  CHECK(s.busy_slots == 0);
  CHECK(s.generated_tokens >= 8);
  // Each step is of one kind, and the rows are the prompts' tokens and the fed decode tokens (a
  // result's last token is sampled, never fed).
  CHECK(s.decode_steps.steps + s.mixed_steps.steps + s.prompt_steps.steps == s.steps);
  CHECK(s.decode_steps.rows + s.mixed_steps.rows + s.prompt_steps.rows ==
        s.prefill_tokens + s.generated_tokens - requests.size());
  CHECK(s.prompt_steps.steps >= 1);
  CHECK(s.decode_steps.seconds + s.mixed_steps.seconds > 0);
}

TEST_CASE("Engine: tokens by callback or pulled with next() concatenate to the text", "[engine]") {
  Engine engine(tiny_model(), EngineSettings{});
  std::string by_callback;
  auto a = engine.submit("Streaming", sampled(3), [&](const TokenEvent& e) {
    by_callback += std::string(e.text);
    return true;
  });
  auto b = engine.submit("Streaming", sampled(3));
  std::string pulled;
  size_t tokens = 0;
  while (auto t = b->next(std::chrono::milliseconds(20000))) {
    pulled += t->text;
    tokens += t->token >= 0;
  }
  CHECK(b->done());
  const auto ra = a->wait(), rb = b->wait();
  CHECK(by_callback == ra[0].text);
  CHECK(pulled == rb[0].text);
  CHECK(tokens == rb[0].ids.size());
  CHECK(ra[0].ids == rb[0].ids);
}

TEST_CASE("Engine: cancel ends a request with 'cancelled'; a full queue is kBusy", "[engine]") {
  EngineSettings settings;
  settings.max_batch = 1;
  settings.max_queue = 1;
  Engine engine(tiny_model(), settings);
  GenerateOptions long_run;
  long_run.max_new_tokens = 80;
  long_run.ignore_eos = true;
  auto running = engine.submit("one", long_run);
  while (!running->next(std::chrono::milliseconds(20000))) {
  }  // it has started
  auto waiting = engine.submit("two", long_run);
  try {
    engine.submit("three", long_run);
    FAIL("a third request was accepted past max_queue 1");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kBusy);
  }
  running->cancel();
  waiting->cancel();
  const auto r = running->wait();
  CHECK(r[0].finish_reason == FinishReason::kCancelled);
  CHECK(r[0].ids.size() < 80);
  CHECK(waiting->wait()[0].finish_reason == FinishReason::kCancelled);
  GenerateOptions negative_temperature;
  negative_temperature.temperature = -1;
  CHECK_THROWS_AS(engine.submit("x", negative_temperature), Error);
}

TEST_CASE("Engine: max_queue holds while the worker is taking requests in", "[engine]") {
  // Submits back to back while the one slot is busy: the worker takes each accepted request from
  // the inbox and steps; none may be counted in neither place, or a third would get in.
  EngineSettings settings;
  settings.max_batch = 1;
  settings.max_queue = 2;
  Engine engine(tiny_model(), settings);
  GenerateOptions long_run;
  long_run.max_new_tokens = 80;
  long_run.ignore_eos = true;
  // Slow tokens keep the slot busy (80 x 3 ms) for far longer than the loop below runs.
  std::atomic<int> tokens{0};
  auto running = engine.submit("one", long_run, [&](const TokenEvent&) {
    ++tokens;
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    return true;
  });
  while (tokens == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // it holds the slot
  std::vector<std::shared_ptr<Engine::Request>> accepted;
  size_t refused = 0;
  for (int i = 0; i < 200 && refused < 20; ++i) {
    try {
      accepted.push_back(engine.submit("two", long_run));
    } catch (const Error& e) {
      REQUIRE(e.code() == ErrorCode::kBusy);
      ++refused;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  CHECK(accepted.size() == 2);
  CHECK(refused == 20);
  running->cancel();
  for (auto& r : accepted) r->cancel();
  running->wait();
  for (auto& r : accepted) r->wait();
}

TEST_CASE("Generator: n samples, top_logprobs, seeds and timings in the results", "[engine][generator]") {
  Generator gen(tiny_model(), 4, 96);
  GenerateOptions o = sampled(9, 3);
  o.top_logprobs = 4;
  const auto r = gen.generate_batch({"Hi", "Yo"}, o);
  REQUIRE(r.size() == 6);
  for (size_t k = 0; k < 6; ++k) {
    CHECK(r[k].index == k / 3);
    CHECK(r[k].sample == k % 3);
    CHECK(r[k].seed == 9);
    REQUIRE(r[k].top_logprobs.size() == r[k].ids.size());
    for (size_t i = 0; i < r[k].ids.size(); ++i) {
      REQUIRE(r[k].top_logprobs[i].size() == 4);
      CHECK(r[k].top_logprobs[i][0].logprob >= r[k].logprobs[i]);  // the best alternative is at least as likely
    }
  }
  CHECK(r[0].ids != r[1].ids);  // samples differ
  // No seed given: one is drawn and reported, and it reproduces the result.
  GenerateOptions unseeded = sampled(0);
  unseeded.seed.reset();
  const Result first = gen.generate("Hi", unseeded);
  GenerateOptions again = unseeded;
  again.seed = first.seed;
  CHECK(gen.generate("Hi", again).ids == first.ids);
}

TEST_CASE("C: an engine runs requests, streams tokens and cancels", "[engine][c]") {
  eagerlm_model* model = nullptr;
  eagerlm::test::TempDir dir;
  eagerlm::test::write_file((dir / "config.json"), eagerlm::test::tiny_config_json());
  REQUIRE(eagerlm_model_initialize((dir / "config.json").c_str(), 7, EAGERLM_DEVICE_CPU, &model) == EAGERLM_OK);
  eagerlm_engine* engine = nullptr;
  REQUIRE(eagerlm_engine_create(model, 2, 96, 0, &engine) == EAGERLM_OK);
  eagerlm_options* options = nullptr;
  REQUIRE(eagerlm_options_create(&options) == EAGERLM_OK);
  for (auto [name, value] : {std::pair{"max_new_tokens", "10"}, {"temperature", "0.8"}, {"seed", "5"},
                             {"logprobs", "true"}, {"top_logprobs", "2"}, {"logit_bias", "50256:-100"}})
    REQUIRE(eagerlm_options_set(options, name, value) == EAGERLM_OK);
  CHECK(eagerlm_options_set(options, "presence_penalty", "3") == EAGERLM_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(eagerlm_last_error()).find("presence_penalty") != std::string::npos);
  CHECK(eagerlm_options_set(options, "colour", "red") == EAGERLM_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(eagerlm_last_error()).find("known:") != std::string::npos);

  eagerlm_request* request = nullptr;
  REQUIRE(eagerlm_engine_submit(engine, "Hello", 5, options, &request) == EAGERLM_OK);
  std::string streamed;
  eagerlm_token token;
  int has = 0;
  for (;;) {
    REQUIRE(eagerlm_request_next(request, 20000, &token, &has) == EAGERLM_OK);
    if (!has) break;
    streamed.append(token.text, token.text_size);
  }
  CHECK(eagerlm_request_done(request) == 1);
  eagerlm_result* result = nullptr;
  REQUIRE(eagerlm_request_wait(request, &result) == EAGERLM_OK);
  REQUIRE(eagerlm_result_count(result) == 1);
  size_t size = 0;
  REQUIRE(eagerlm_result_text(result, 0, nullptr, 0, &size) == EAGERLM_OK);
  std::string text(size, '\0');
  REQUIRE(eagerlm_result_text(result, 0, text.data(), size + 1, &size) == EAGERLM_OK);
  CHECK(text == streamed);
  eagerlm_result_info info;
  REQUIRE(eagerlm_result_info_get(result, 0, &info) == EAGERLM_OK);
  CHECK(info.seed == 5);
  CHECK(info.generated_tokens == 10);
  int32_t ids[2];
  float lp[2];
  size_t count = 0;
  REQUIRE(eagerlm_result_top_logprobs(result, 0, 3, ids, lp, 2, &count) == EAGERLM_OK);
  CHECK(count == 2);
  CHECK(lp[0] >= lp[1]);
  CHECK(eagerlm_result_top_logprobs(result, 0, 10, ids, lp, 2, &count) == EAGERLM_ERROR_INVALID_ARGUMENT);
  eagerlm_result_free(result);
  eagerlm_request_free(request);

  // Cancelled mid-run.
  REQUIRE(eagerlm_options_set(options, "max_new_tokens", "90") == EAGERLM_OK);
  REQUIRE(eagerlm_options_set(options, "ignore_eos", "1") == EAGERLM_OK);
  REQUIRE(eagerlm_engine_submit(engine, "Long", 4, options, &request) == EAGERLM_OK);
  REQUIRE(eagerlm_request_next(request, 20000, &token, &has) == EAGERLM_OK);
  REQUIRE(eagerlm_request_cancel(request) == EAGERLM_OK);
  REQUIRE(eagerlm_request_wait(request, &result) == EAGERLM_OK);
  eagerlm_finish_reason why;
  REQUIRE(eagerlm_result_finish_reason(result, 0, &why) == EAGERLM_OK);
  CHECK(why == EAGERLM_FINISH_CANCELLED);
  eagerlm_result_free(result);
  eagerlm_request_free(request);
  eagerlm_engine_stats stats;
  REQUIRE(eagerlm_engine_stats_get(engine, &stats) == EAGERLM_OK);
  CHECK(stats.busy_slots == 0);
  CHECK(stats.max_batch == 2);
  eagerlm_step_counts decode, prompt;
  REQUIRE(eagerlm_engine_step_counts_get(engine, &decode, nullptr, &prompt) == EAGERLM_OK);  // NULL: not wanted
  CHECK(prompt.steps >= 1);
  CHECK(prompt.seconds > 0);
  CHECK(decode.steps + prompt.steps <= stats.steps);
  CHECK(eagerlm_engine_step_counts_get(nullptr, &decode, nullptr, nullptr) == EAGERLM_ERROR_INVALID_ARGUMENT);
  CHECK(eagerlm_engine_submit(nullptr, "x", 1, nullptr, &request) == EAGERLM_ERROR_INVALID_ARGUMENT);
  eagerlm_options_free(options);
  eagerlm_engine_free(engine);
  eagerlm_model_free(model);
}

TEST_CASE("the public defaults are the engine's", "[engine][options]") {
  // GenerateOptions{} and the C API's fresh options generate exactly as the engine's defaults
  // (greedy, 128 tokens): one statement of the defaults, checked here.
  Generator gen(tiny_model(), 1, 96);
  GenerateOptions defaults;
  CHECK(defaults.max_new_tokens == 128);
  CHECK(defaults.temperature == 0.0f);
  CHECK_FALSE(defaults.seed.has_value());
  const auto greedy = eagerlm::test::greedy_by_logits(tiny_model(), tiny_model().tokenize("Default"), 5);
  defaults.max_new_tokens = 5;
  CHECK(gen.generate("Default", defaults).ids == greedy);
}

TEST_CASE("every option the C API knows is in docs/library.md's table", "[engine][options][docs]") {
  // An unknown name is refused with the list of known ones: that list is the option table.
  eagerlm_options* options = nullptr;
  REQUIRE(eagerlm_options_create(&options) == EAGERLM_OK);
  REQUIRE(eagerlm_options_set(options, "no_such_option", "1") == EAGERLM_ERROR_INVALID_ARGUMENT);
  const std::string message = eagerlm_last_error();
  eagerlm_options_free(options);
  const size_t open = message.find("(known: ");
  REQUIRE(open != std::string::npos);
  std::vector<std::string> names;
  std::string list = message.substr(open + 8, message.rfind(')') - open - 8);
  for (size_t start = 0; start < list.size();) {
    const size_t comma = list.find(", ", start);
    names.push_back(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    start = comma == std::string::npos ? list.size() : comma + 2;
  }
  REQUIRE(names.size() >= 20);
  std::ifstream file(std::string(EAGERLM_SOURCE_DIR) + "/docs/library.md");
  REQUIRE(file);
  const std::string docs((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  for (const std::string& name : names) {
    INFO("option " << name);
    CHECK(docs.find("| `" + name + "` |") != std::string::npos);
  }
}
