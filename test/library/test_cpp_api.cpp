// The C++ API through libeagerlm.so, as a user sees it: models, tokenizing, logits, greedy and
// sampled generation, stop strings, the streaming callback, limits, and the errors it throws.
#include <catch2/catch.hpp>

#include <eagerlm/eagerlm.hpp>

#include <algorithm>
#include <cmath>
#include <utility>
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

// max |a - b| over max(1, max |b|): logits that moved, against the scale of the logits.
double largest_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0, scale = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, double(std::abs(a[i] - b[i])));
    scale = std::max(scale, double(std::abs(b[i])));
  }
  return worst / scale;
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
  test::write_file((dir / "config.json"), test::tiny_config_json());
  const std::vector<int32_t> ids = {15496, 995};
  const auto a = Model::initialize((dir / "config.json"), 7).logits(ids);
  const auto b = Model::initialize(dir.str(), 7).logits(ids);  // the directory works too
  const auto c = Model::initialize((dir / "config.json"), 8).logits(ids);
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

TEST_CASE("score gives log p of each token after the first, and checks its input", "[library][score]") {
  const Model& m = tiny_model();
  const std::vector<int32_t> ids = m.tokenize("The quick brown fox jumps over the lazy dog");
  const auto lp = m.score(ids);
  REQUIRE(lp.size() == ids.size() - 1);
  // Log-probabilities (their values against the double reference: test_reference.cpp).
  for (float v : lp) CHECK((std::isfinite(v) && v <= 0.0f));
  // A batch of ragged sequences gives each its own count; one token gives nothing.
  const auto batch = m.score_batch({ids, {15496}, {15496, 995}});
  REQUIRE(batch.size() == 3);
  CHECK(batch[0].size() == ids.size() - 1);
  CHECK(batch[1].empty());
  CHECK(batch[2].size() == 1);
  CHECK(m.score_batch({}).empty());
  CHECK(m.score({15496}).empty());

  CHECK(code_of([&] { m.score({}); }) == ErrorCode::kInvalidArgument);
  CHECK_THAT(message_of([&] { m.score_batch({{1, 2}, {}}); }), Catch::Contains("score: sequence 1 is empty"));
  CHECK_THAT(message_of([&] { m.score({1, 50257}); }), Catch::Contains("token id 50257 at index 1"));
  CHECK_THAT(message_of([&] { m.score({-3}); }), Catch::Contains("token id -3 at index 0"));
  CHECK_THAT(message_of([&] { m.score(std::vector<int32_t>(97, 1)); }), Catch::Contains("context length 96"));
  CHECK(m.score(std::vector<int32_t>(96, 1)).size() == 95);
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

  GenerateOptions two_tokens;
  two_tokens.max_new_tokens = 2;
  CHECK(gen.generate_batch({"a", "b", "c"}, two_tokens).size() == 3);  // the third waits
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
  test::write_file((dir / "model.safetensors"), "not read: the config fails first");
  test::write_file((dir / "config.json"), "{ not json");
  CHECK(code_of([&] { Model::load(dir.str()); }) == ErrorCode::kInvalidFile);
  CHECK_THAT(message_of([&] { Model::load(dir.str()); }), Catch::Contains("config.json"));
  CHECK(code_of([&] { Model::initialize((dir / "config.json")); }) == ErrorCode::kInvalidFile);
  test::write_file((dir / "config.json"), test::tiny_config_json());
  test::write_file((dir / "model.safetensors"), "garbage");
  CHECK_THAT(message_of([&] { Model::load(dir.str()); }), Catch::Contains("model.safetensors"));
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

TEST_CASE("a generator with more sequences than a step carries decodes them all", "[library][generate]") {
  // max_batch beyond the step's 512 rows: decode steps are split (they used to fail with
  // "513 tokens in one step exceed max_step_rows 512" after the whole prefill was paid).
  const Model& m = tiny_model();
  Generator gen(m, 600, 16);
  std::vector<std::vector<int32_t>> prompts;
  for (int32_t i = 0; i < 600; ++i) prompts.push_back({int32_t(100 + i), 11});
  GenerateOptions o;
  o.max_new_tokens = 3;
  o.ignore_eos = true;
  const auto results = gen.generate_tokens(prompts, o);
  REQUIRE(results.size() == 600);
  for (size_t i : {size_t(0), size_t(511), size_t(512), size_t(599)})
    CHECK(results[i].ids == test::greedy_by_logits(m, prompts[i], 3));
}

TEST_CASE("a model whose vocabulary the tokenizer does not fit runs on ids and refuses text", "[library][vocab]") {
  // Smaller than GPT-2's 50257 tokens and no tokenizer files: decided at load, said by every
  // text call, while ids keep working.
  test::TempDir dir;
  test::write_file((dir / "config.json"),
                   R"({"n_layer": 1, "n_embd": 32, "n_head": 2, "n_positions": 32, "vocab_size": 300})");
  const Model m = Model::initialize((dir / "config.json"), 1);
  CHECK(m.logits({1, 2, 3}).size() == 3 * 300);
  CHECK(code_of([&] { m.tokenize("hello"); }) == ErrorCode::kInvalidArgument);
  CHECK_THAT(message_of([&] { m.tokenize("hello"); }), Catch::Contains("300") && Catch::Contains("50257"));
  Generator gen(m, 1, 16);
  CHECK(code_of([&] { gen.generate("hello"); }) == ErrorCode::kInvalidArgument);
  GenerateOptions o;
  o.max_new_tokens = 2;
  CHECK(gen.generate_tokens({{5, 6}}, o)[0].ids.size() == 2);
}

TEST_CASE("a KV cache larger than the machine's memory is refused before allocating", "[library][errors]") {
  const Model& m = tiny_model();
  CHECK(code_of([&] { Generator(m, size_t(1) << 30, 96); }) == ErrorCode::kOutOfMemory);
  CHECK_THAT(message_of([&] { Generator(m, size_t(1) << 30, 96); }),
             Catch::Contains("KV cache") && Catch::Contains("max_batch 1073741824"));
}

TEST_CASE("LoadOptions chooses the weight and cache types; bad names name the field", "[library][weights]") {
  eagerlm::test::TempDir dir;
  eagerlm::test::write_file((dir / "config.json"), eagerlm::test::tiny_config_json());
  CHECK(tiny_model().info().weights == "f32");
  CHECK(tiny_model().info().kv_type == "f32");
  LoadOptions options;
  options.weights = "int8";
  options.kv_type = "bf16";
  const Model m = Model::initialize((dir / "config.json"), 7, Device::kCpu, options);
  CHECK(m.info().weights == "int8");
  CHECK(m.info().kv_type == "bf16");
  // Logits of the int8 model are close to, not equal to, the float32 model's.
  const std::vector<int32_t> ids = {464, 3290, 318, 257};
  const auto a = m.logits(ids), b = tiny_model().logits(ids);
  REQUIRE(a.size() == b.size());
  CHECK(a != b);
  CHECK(largest_difference(a, b) <= 32 * std::ldexp(1.0, -8));  // test_typed_weights.cpp's int8 limit
  for (auto [field, value] : {std::pair<const char*, const char*>{"weights", "int4"}, {"kv_type", "i8"}}) {
    LoadOptions bad;
    (std::string(field) == "weights" ? bad.weights : bad.kv_type) = value;
    try {
      Model::initialize((dir / "config.json"), 7, Device::kCpu, bad);
      FAIL("accepted LoadOptions." << field << " = " << value);
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kInvalidArgument);
      CHECK_THAT(e.what(), Catch::Contains(std::string("LoadOptions.") + field));
    }
  }
}

TEST_CASE("LoadOptions.gemm_math: bf16 products for bf16 weights on the CPU, refused with a reason elsewhere",
          "[library][weights]") {
  eagerlm::test::TempDir dir;
  eagerlm::test::write_file((dir / "config.json"), eagerlm::test::tiny_config_json());
  CHECK(tiny_model().info().gemm_math == "fp32");
  LoadOptions bf16;
  bf16.weights = "bf16";
  const Model fp32_math = Model::initialize((dir / "config.json"), 7, Device::kCpu, bf16);
  bf16.gemm_math = "bf16";
  // 40 rows: past the few-row kernels, so that every CPU with a bf16 GEMM runs it (AMX: all rows).
  std::vector<int32_t> ids(40);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = int32_t(1000 + 37 * i);
  if (!__builtin_cpu_supports("avx512bf16")) {
    CHECK_THAT(message_of([&] { Model::initialize((dir / "config.json"), 7, Device::kCpu, bf16); }),
               Catch::Contains("AVX512_BF16"));
  } else {
    const Model m = Model::initialize((dir / "config.json"), 7, Device::kCpu, bf16);
    CHECK(m.info().gemm_math == "bf16");
    CHECK(m.info().weights == "bf16");
    // Activations rounded to 8 bits change the logits, a little.
    const auto a = m.logits(ids), b = fp32_math.logits(ids);
    REQUIRE(a.size() == b.size());
    CHECK(a != b);
    CHECK(largest_difference(a, b) <= 32 * std::ldexp(1.0, -8));
  }
  LoadOptions f32_weights;
  f32_weights.gemm_math = "bf16";
  CHECK(code_of([&] { Model::initialize((dir / "config.json"), 7, Device::kCpu, f32_weights); }) ==
        ErrorCode::kUnsupported);
  CHECK_THAT(message_of([&] { Model::initialize((dir / "config.json"), 7, Device::kCpu, f32_weights); }),
             Catch::Contains("for bf16 weights") && Catch::Contains("f32"));
  LoadOptions tf32;
  tf32.gemm_math = "tf32";
  CHECK(code_of([&] { Model::initialize((dir / "config.json"), 7, Device::kCpu, tf32); }) == ErrorCode::kUnsupported);
  LoadOptions bad;
  bad.gemm_math = "fp16";
  CHECK(code_of([&] { Model::initialize((dir / "config.json"), 7, Device::kCpu, bad); }) ==
        ErrorCode::kInvalidArgument);
  CHECK_THAT(message_of([&] { Model::initialize((dir / "config.json"), 7, Device::kCpu, bad); }),
             Catch::Contains("LoadOptions.gemm_math") && Catch::Contains("fp16"));
}

TEST_CASE("one_line_message writes control characters as escapes, as Error does", "[library][errors]") {
  const std::string raw = std::string("a\nb\tc\x1b") + "d \xc3\xbc";
  CHECK(eagerlm::one_line_message(raw) == "a\\nb\\tc\\x1bd \xc3\xbc");
  CHECK(eagerlm::Error(eagerlm::ErrorCode::kInternal, raw).what() == eagerlm::one_line_message(raw));
}
