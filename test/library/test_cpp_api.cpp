// The C++ API through libeagerlm.so, as a user sees it: models, tokenizing, logits, greedy and
// sampled generation, stop strings, the streaming callback, limits, and the errors it throws.
#include <catch2/catch.hpp>

#include <eagerlm/eagerlm.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "test/library/library_test_support.h"

using namespace eagerlm;
using eagerlm::test::tiny_model;

namespace {

ErrorCode code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    INFO("message: " << e.what());
    CHECK(std::string(e.what()).size() > 10);
    return e.code();
  }
  FAIL("no eagerlm::Error thrown");
  return ErrorCode::kInternal;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Largest |a - b| (infinite when the sizes differ or a value is NaN).
float max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  float worst = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    const float e = std::abs(a[k] - b[k]);
    if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
  }
  return worst;
}

}  // namespace

TEST_CASE("the headers and the loaded library agree on the version", "[library]") {
  CHECK(std::string(version()) == EAGERLM_VERSION_STRING);
  CHECK(std::string(device_name(Device::kCpu)) == "cpu");
  CHECK(std::string(finish_reason_name(FinishReason::kStop)) == "stop");
}

TEST_CASE("a model initialized from a config reports its shape", "[library]") {
  const ModelInfo info = tiny_model().info();
  CHECK(info.n_layer == 2);
  CHECK(info.n_embd == 64);
  CHECK(info.n_head == 4);
  CHECK(info.context_length == 96);
  CHECK(info.vocab_size == 50257);
  CHECK(info.eos_token_id == 50256);
  // wte + wpe + 2 blocks (12·d² + 13·d) + ln_f, d = 64.
  CHECK(info.parameter_count == 50257 * 64 + 96 * 64 + 2 * (12 * 64 * 64 + 13 * 64) + 2 * 64);
  CHECK(info.device == Device::kCpu);
  CHECK(info.source.find("initialized from seed 7") != std::string::npos);
}

TEST_CASE("the same seed gives the same weights; another seed, others", "[library]") {
  test::TempDir dir;
  test::write_file(dir.file("config.json"), test::tiny_config_json());
  const std::vector<int32_t> ids = {15496, 995};
  const auto a = Model::initialize(dir.file("config.json"), 7).logits(ids);
  const auto b = Model::initialize(dir.path.string(), 7).logits(ids);  // the directory works too
  const auto c = Model::initialize(dir.file("config.json"), 8).logits(ids);
  CHECK(a == tiny_model().logits(ids));
  CHECK(a == b);
  CHECK(a != c);
}

TEST_CASE("tokenize and detokenize use GPT-2's vocabulary", "[library]") {
  const Model& m = tiny_model();
  CHECK(m.tokenize("Hello world") == std::vector<int32_t>{15496, 995});
  CHECK(m.detokenize({15496, 995}) == "Hello world");
  CHECK(m.tokenize("<|endoftext|>").size() > 1);
  CHECK(m.tokenize("<|endoftext|>", true) == std::vector<int32_t>{50256});
  CHECK(m.tokenize("").empty());
  const std::string text = "Grüße, 世界! 🤖";
  CHECK(m.detokenize(m.tokenize(text)) == text);
  CHECK(code_of([&] { m.tokenize("bad \xff byte"); }) == ErrorCode::kInvalidArgument);
  CHECK(code_of([&] { m.detokenize({50257}); }) == ErrorCode::kInvalidArgument);
  CHECK(code_of([&] { m.detokenize({-1}); }) == ErrorCode::kInvalidArgument);
}

TEST_CASE("logits of a ragged batch equal each sequence's own logits", "[library][logits]") {
  const Model& m = tiny_model();
  const size_t vocab = m.info().vocab_size;
  const std::vector<std::vector<int32_t>> batch = {{464, 3290, 318}, {15496}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
  const auto together = m.logits_batch(batch);
  REQUIRE(together.size() == batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    const auto alone = m.logits(batch[i]);
    REQUIRE(together[i].size() == batch[i].size() * vocab);
    REQUIRE(alone.size() == together[i].size());
    // Batched rows go through GEMMs of other shapes: equal up to float32 rounding of sums of 256
    // products (~256·2^-24 relative ≈ 2e-5 of the logit scale; 1e-4 leaves a margin).
    float scale = 0, worst = 0;
    for (size_t k = 0; k < alone.size(); ++k) {
      scale = std::max(scale, std::abs(alone[k]));
      worst = std::max(worst, std::abs(alone[k] - together[i][k]));
    }
    INFO("sequence " << i << ": worst " << worst << " of scale " << scale);
    CHECK(worst <= 1e-4f * std::max(scale, 1.0f));
  }
  // A prefix's logits are the first rows of the longer sequence's (causal attention).
  const auto prefix = m.logits({1, 2, 3});
  CHECK(max_difference(prefix, {together[2].begin(), together[2].begin() + long(prefix.size())}) <= 1e-4f);
  CHECK(m.logits_batch({}).empty());
  CHECK(code_of([&] { m.logits({}); }) == ErrorCode::kInvalidArgument);
  CHECK(code_of([&] { m.logits({50257}); }) == ErrorCode::kInvalidArgument);
  CHECK(code_of([&] { m.logits(std::vector<int32_t>(97, 1)); }) == ErrorCode::kInvalidArgument);
}

TEST_CASE("greedy generation is the argmax chain of the model's logits", "[library][generate]") {
  const Model& m = tiny_model();
  Generator gen(m, 2, 64);
  CHECK(gen.max_batch() == 2);
  CHECK(gen.max_length() == 64);
  GenerateOptions o;
  o.max_new_tokens = 10;
  o.ignore_eos = true;
  const std::string prompt = "The quick brown fox";
  const Result r = gen.generate(prompt, o);
  CHECK(r.finish_reason == FinishReason::kLength);
  CHECK(r.ids == test::greedy_by_logits(m, m.tokenize(prompt), 10));
  // The text is the ids' text (made valid UTF-8: compare when it already is).
  const std::string raw = m.detokenize(r.ids);
  if (test::valid_utf8(raw)) CHECK(r.text == raw);

  // A batch gives each prompt what it gets alone; token-id prompts equal text prompts.
  const auto both = gen.generate_batch({prompt, "Hello"}, o);
  REQUIRE(both.size() == 2);
  CHECK(both[0].ids == r.ids);
  CHECK(both[1].ids == gen.generate("Hello", o).ids);
  CHECK(gen.generate_tokens({m.tokenize(prompt)}, o)[0].ids == r.ids);
}

TEST_CASE("an empty prompt starts from end-of-text", "[library][generate]") {
  Generator gen(tiny_model(), 1, 32);
  GenerateOptions o;
  o.max_new_tokens = 4;
  o.ignore_eos = true;
  CHECK(gen.generate("", o).ids == gen.generate_tokens({{50256}}, o)[0].ids);
}

TEST_CASE("sampling depends on the seed and nothing else", "[library][generate]") {
  Generator gen(tiny_model(), 2, 64);
  GenerateOptions o;
  o.max_new_tokens = 12;
  o.ignore_eos = true;
  o.temperature = 1.0f;
  o.top_k = 50;
  o.top_p = 0.9f;
  o.seed = 42;
  const Result a = gen.generate("Once upon a time", o);
  CHECK(gen.generate("Once upon a time", o).ids == a.ids);
  o.seed = 43;
  CHECK(gen.generate("Once upon a time", o).ids != a.ids);
  o.seed = 42;
  o.logprobs = true;
  const Result with_logprobs = gen.generate("Once upon a time", o);
  CHECK(with_logprobs.ids == a.ids);
  REQUIRE(with_logprobs.logprobs.size() == a.ids.size());
  for (float lp : with_logprobs.logprobs) CHECK((lp <= 0.0f && std::isfinite(lp)));
}

TEST_CASE("stop strings cut the text before their first occurrence", "[library][generate]") {
  Generator gen(tiny_model(), 1, 96);
  GenerateOptions o;
  o.max_new_tokens = 24;
  o.ignore_eos = true;
  const Result full = gen.generate("In the beginning", o);
  // Pick an ASCII character from the middle of the text as the stop string.
  size_t at = full.text.size() / 2;
  while (at < full.text.size() && static_cast<unsigned char>(full.text[at]) >= 0x80) ++at;
  REQUIRE(at < full.text.size());
  o.stop = {"never appears \x01", full.text.substr(at, 1)};
  const Result cut = gen.generate("In the beginning", o);
  CHECK(cut.finish_reason == FinishReason::kStop);
  CHECK(cut.text == full.text.substr(0, full.text.find(o.stop[1])));
}

TEST_CASE("the callback streams the text and can stop generation", "[library][generate]") {
  Generator gen(tiny_model(), 2, 64);
  GenerateOptions o;
  o.max_new_tokens = 16;
  o.ignore_eos = true;
  std::vector<std::string> streamed(2);
  std::vector<size_t> tokens(2, 0);
  const auto results = gen.generate_batch({"First prompt", "Second"}, o, [&](const TokenEvent& e) {
    streamed.at(e.index) += std::string(e.text);
    if (e.token >= 0) ++tokens.at(e.index);
    return !(e.index == 1 && tokens[1] == 3);  // stop the second prompt after 3 tokens
  });
  CHECK(streamed[0] == results[0].text);
  CHECK(streamed[1] == results[1].text);
  CHECK(results[0].finish_reason == FinishReason::kLength);
  CHECK(results[0].ids.size() == 16);
  CHECK(results[1].finish_reason == FinishReason::kCallback);
  CHECK(results[1].ids.size() == 3);
}

TEST_CASE("a callback's exception comes out of generate unchanged; the generator stays usable", "[library][generate]") {
  struct Mine {};
  Generator gen(tiny_model(), 1, 32);
  GenerateOptions o;
  o.max_new_tokens = 5;
  o.ignore_eos = true;
  CHECK_THROWS_AS(gen.generate("x", o, [](const TokenEvent&) -> bool { throw Mine{}; }), Mine);
  CHECK(gen.generate("x", o).ids.size() == 5);
  // Calling the generator from its own callback is refused, not deadlocked.
  ErrorCode inner = ErrorCode::kInternal;
  gen.generate("x", o, [&](const TokenEvent&) {
    inner = code_of([&] { gen.generate("y", o); });
    return false;
  });
  CHECK(inner == ErrorCode::kInvalidArgument);
}

TEST_CASE("generation stops at max_length and max_new_tokens", "[library][generate]") {
  const Model& m = tiny_model();
  const auto prompt = m.tokenize("one two three");
  Generator gen(m, 1, prompt.size() + 3);
  GenerateOptions o;
  o.ignore_eos = true;
  o.max_new_tokens = 100;
  const Result r = gen.generate_tokens({prompt}, o)[0];
  CHECK(r.ids.size() == 3);
  CHECK(r.finish_reason == FinishReason::kLength);
  o.max_new_tokens = 0;
  CHECK(gen.generate_tokens({prompt}, o)[0].ids.empty());
  Generator whole(m);  // max_length 0: the model's context
  CHECK(whole.max_length() == 96);
  CHECK(whole.max_batch() == 1);
}

TEST_CASE("moving a generator moves its cache", "[library][generate]") {
  Generator a(tiny_model(), 1, 16);
  Generator b = std::move(a);
  GenerateOptions o;
  o.max_new_tokens = 2;
  CHECK(b.generate("hi", o).ids.size() <= 2);
  CHECK(code_of([&] { a.generate("hi", o); }) == ErrorCode::kInvalidArgument);
}

TEST_CASE("bad options and requests throw eagerlm::Error naming them", "[library][errors]") {
  const Model& m = tiny_model();
  Generator gen(m, 2, 32);
  auto with = [&](auto set) {
    GenerateOptions o;
    set(o);
    return message_of([&] { gen.generate("x", o); });
  };
  CHECK_THAT(with([](GenerateOptions& o) { o.temperature = -1; }), Catch::Contains("temperature"));
  CHECK_THAT(with([](GenerateOptions& o) { o.temperature = NAN; }), Catch::Contains("temperature"));
  CHECK_THAT(with([](GenerateOptions& o) { o.top_p = 0; }), Catch::Contains("top_p"));
  CHECK_THAT(with([](GenerateOptions& o) { o.min_p = 2; }), Catch::Contains("min_p"));
  CHECK_THAT(with([](GenerateOptions& o) { o.repetition_penalty = 0; }), Catch::Contains("repetition_penalty"));
  CHECK_THAT(with([](GenerateOptions& o) { o.top_k = size_t(1) << 40; }), Catch::Contains("top_k"));
  CHECK_THAT(with([](GenerateOptions& o) { o.max_new_tokens = size_t(1) << 40; }), Catch::Contains("max_new_tokens"));

  CHECK(code_of([&] { gen.generate_batch({"a", "b", "c"}); }) == ErrorCode::kInvalidArgument);
  std::string long_prompt;
  for (int i = 0; i < 40; ++i) long_prompt += " word";  // 40 tokens > max_length 32
  CHECK_THAT(message_of([&] { gen.generate(long_prompt); }), Catch::Contains("40 tokens"));
  CHECK(code_of([&] { gen.generate_tokens({{}}); }) == ErrorCode::kInvalidArgument);
  CHECK(code_of([&] { gen.generate_tokens({{50257}}); }) == ErrorCode::kInvalidArgument);
  CHECK_THAT(message_of([&] { gen.generate_batch({"ok", "bad \xc3"}); }), Catch::Contains("prompt 1"));
  CHECK(code_of([&] { Generator(m, 0, 8); }) == ErrorCode::kInvalidArgument);
  CHECK(code_of([&] { Generator(m, 1, 97); }) == ErrorCode::kInvalidArgument);
  CHECK(code_of([] { set_cpu_threads(-1); }) == ErrorCode::kInvalidArgument);
}

TEST_CASE("loading and initializing report bad paths and files", "[library][errors]") {
  CHECK(code_of([] { Model::load("/nonexistent/eagerlm-model"); }) == ErrorCode::kIo);
  CHECK(code_of([] { Model::initialize("not-a-preset-or-file"); }) == ErrorCode::kIo);
  CHECK(code_of([] { Model::initialize(""); }) == ErrorCode::kInvalidArgument);
  test::TempDir dir;
  test::write_file(dir.file("model.safetensors"), "not read: the config fails first");
  test::write_file(dir.file("config.json"), "{ not json");
  CHECK(code_of([&] { Model::load(dir.path.string()); }) == ErrorCode::kInvalidFile);
  CHECK_THAT(message_of([&] { Model::load(dir.path.string()); }), Catch::Contains("config.json"));
  CHECK(code_of([&] { Model::initialize(dir.file("config.json")); }) == ErrorCode::kInvalidFile);
  test::write_file(dir.file("config.json"), test::tiny_config_json());
  test::write_file(dir.file("model.safetensors"), "garbage");
  CHECK_THAT(message_of([&] { Model::load(dir.path.string()); }), Catch::Contains("model.safetensors"));
  if (!cuda_available()) {
    CHECK(code_of([] { Model::initialize("gpt2", 0, Device::kCuda); }) == ErrorCode::kUnsupported);
  }
}

TEST_CASE("set_cpu_threads changes the thread count, not the results", "[library]") {
  const std::vector<int32_t> ids = {464, 3290, 318, 257};
  const auto before = tiny_model().logits(ids);
  set_cpu_threads(1);
  CHECK(cpu_threads() == 1);
  const auto one = tiny_model().logits(ids);
  set_cpu_threads(0);
  CHECK(cpu_threads() == 0);
  // Other thread counts split GEMM columns differently: equal up to float32 rounding.
  CHECK(max_difference(one, before) <= 1e-4f);
}
