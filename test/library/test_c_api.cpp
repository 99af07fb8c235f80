// The C API: every error case returns a status with a message (and never aborts or throws), the
// size-query convention for output buffers, the thread-local last error, and generation that
// agrees with the C++ API.
#include <catch2/catch.hpp>

#include <eagerlm/eagerlm.h>

#include <string>
#include <thread>
#include <vector>

#include "test/library/library_test_support.h"

namespace {

// A status, and this thread's message right after it.
struct Outcome {
  eagerlm_status status;
  std::string message;
};

template <typename Call>
Outcome outcome(Call call) {
  const eagerlm_status s = call();
  return {s, eagerlm_last_error()};
}

// Checks that `call` fails with `status` and a message containing `needle`.
#define CHECK_FAILS(call, expected_status, needle)                                 \
  do {                                                                             \
    const Outcome o_ = outcome([&] { return call; });                              \
    INFO(#call << " -> " << eagerlm_status_name(o_.status) << ": " << o_.message); \
    CHECK(o_.status == (expected_status));                                         \
    CHECK_THAT(o_.message, Catch::Contains(needle));                               \
  } while (0)

struct ModelHandle {
  ModelHandle() {
    eagerlm::test::TempDir dir;
    eagerlm::test::write_file((dir / "config.json"), eagerlm::test::tiny_config_json());
    REQUIRE(eagerlm_model_initialize((dir / "config.json").c_str(), 7, EAGERLM_DEVICE_CPU, &model) == EAGERLM_OK);
  }
  ~ModelHandle() { eagerlm_model_free(model); }
  eagerlm_model* model = nullptr;
};

const eagerlm_model* c_model() {
  static ModelHandle handle;
  return handle.model;
}

struct Handles {
  ~Handles() {
    eagerlm_result_free(result);
    eagerlm_options_free(options);
    eagerlm_generator_free(generator);
  }
  eagerlm_generator* generator = nullptr;
  eagerlm_options* options = nullptr;
  eagerlm_result* result = nullptr;
};

}  // namespace

TEST_CASE("C: loading reports bad paths, malformed files and bad devices", "[library][c]") {
  eagerlm_model* m = reinterpret_cast<eagerlm_model*>(0x1);  // must be reset to NULL on failure
  CHECK_FAILS(eagerlm_model_load("/nonexistent/eagerlm-model", EAGERLM_DEVICE_CPU, &m), EAGERLM_ERROR_IO,
              "/nonexistent/eagerlm-model");
  CHECK(m == nullptr);
  CHECK_FAILS(eagerlm_model_load(nullptr, EAGERLM_DEVICE_CPU, &m), EAGERLM_ERROR_INVALID_ARGUMENT, "directory is NULL");
  CHECK_FAILS(eagerlm_model_load("x", EAGERLM_DEVICE_CPU, nullptr), EAGERLM_ERROR_INVALID_ARGUMENT, "model is NULL");
  CHECK_FAILS(eagerlm_model_initialize("no-such-preset", 0, EAGERLM_DEVICE_CPU, &m), EAGERLM_ERROR_IO,
              "no-such-preset");
  CHECK_FAILS(eagerlm_model_initialize(nullptr, 0, EAGERLM_DEVICE_CPU, &m), EAGERLM_ERROR_INVALID_ARGUMENT, "NULL");
  CHECK_FAILS(eagerlm_model_initialize("gpt2", 0, static_cast<eagerlm_device>(7), &m), EAGERLM_ERROR_INVALID_ARGUMENT,
              "device");
  if (!eagerlm_cuda_available())
    CHECK_FAILS(eagerlm_model_initialize("gpt2", 0, EAGERLM_DEVICE_CUDA, &m), EAGERLM_ERROR_UNSUPPORTED, "cuda");

  eagerlm::test::TempDir dir;
  const std::string path = dir.str();
  eagerlm::test::write_file((dir / "model.safetensors"), "not read: the config fails first");
  eagerlm::test::write_file((dir / "config.json"), "{ \"n_layer\": ");
  CHECK_FAILS(eagerlm_model_load(path.c_str(), EAGERLM_DEVICE_CPU, &m), EAGERLM_ERROR_INVALID_FILE, "config.json");
  CHECK_FAILS(eagerlm_model_initialize((dir / "config.json").c_str(), 0, EAGERLM_DEVICE_CPU, &m),
              EAGERLM_ERROR_INVALID_FILE, "config.json");
  eagerlm::test::write_file((dir / "config.json"),
                            R"({"n_layer": 2, "n_embd": 64, "n_head": 5, "n_positions": 32, "vocab_size": 100})");
  CHECK_FAILS(eagerlm_model_load(path.c_str(), EAGERLM_DEVICE_CPU, &m), EAGERLM_ERROR_INVALID_FILE, "n_head");
  eagerlm::test::write_file((dir / "config.json"), eagerlm::test::tiny_config_json());
  eagerlm::test::write_file((dir / "model.safetensors"), std::string("\x10\0\0\0\0\0\0\0{\"a\":", 13));
  CHECK_FAILS(eagerlm_model_load(path.c_str(), EAGERLM_DEVICE_CPU, &m), EAGERLM_ERROR_INVALID_FILE,
              "model.safetensors");
  CHECK(m == nullptr);
}

TEST_CASE("C: weight and cache types at load, as the C++ API holds them", "[library][c]") {
  eagerlm::test::TempDir dir;
  eagerlm::test::write_file((dir / "config.json"), eagerlm::test::tiny_config_json());
  const std::string config = (dir / "config.json");
  eagerlm::LoadOptions options;
  options.weights = "int8";
  options.kv_type = "bf16";
  const eagerlm::Model want = eagerlm::Model::initialize(config, 7, eagerlm::Device::kCpu, options);

  eagerlm_model* m = nullptr;
  REQUIRE(eagerlm_model_initialize_as(config.c_str(), 7, EAGERLM_DEVICE_CPU, "int8", "bf16", &m) == EAGERLM_OK);
  CHECK(std::string(eagerlm_model_weights(m)) == "int8");
  CHECK(std::string(eagerlm_model_kv_type(m)) == "bf16");
  const int32_t ids[] = {464, 3290, 318};
  const size_t lengths[] = {3};
  size_t count = 0;
  std::vector<float> logits(3 * 50257);
  REQUIRE(eagerlm_logits(m, ids, lengths, 1, logits.data(), logits.size(), &count) == EAGERLM_OK);
  CHECK(logits == want.logits({464, 3290, 318}));
  CHECK(logits != eagerlm::test::tiny_model().logits({464, 3290, 318}));  // int8 took effect
  eagerlm_model_free(m);

  // NULL and "" mean the defaults: f32 for random weights and for the cache.
  REQUIRE(eagerlm_model_initialize_as(config.c_str(), 7, EAGERLM_DEVICE_CPU, nullptr, "", &m) == EAGERLM_OK);
  CHECK(std::string(eagerlm_model_weights(m)) == "f32");
  CHECK(std::string(eagerlm_model_kv_type(m)) == "f32");
  eagerlm_model_free(m);
  CHECK(std::string(eagerlm_model_weights(nullptr)).empty());
  CHECK(std::string(eagerlm_model_kv_type(nullptr)).empty());

  CHECK_FAILS(eagerlm_model_initialize_as(config.c_str(), 7, EAGERLM_DEVICE_CPU, "int4", nullptr, &m),
              EAGERLM_ERROR_INVALID_ARGUMENT, "int4");
  CHECK(m == nullptr);
  CHECK_FAILS(eagerlm_model_load_as(dir.path().c_str(), EAGERLM_DEVICE_CPU, nullptr, "f64", &m),
              EAGERLM_ERROR_INVALID_ARGUMENT, "kv_type");
  CHECK_FAILS(eagerlm_model_load_as(nullptr, EAGERLM_DEVICE_CPU, "bf16", nullptr, &m),
              EAGERLM_ERROR_INVALID_ARGUMENT, "eagerlm_model_load_as");
}

TEST_CASE("C: eagerlm_load_options carries the GEMM math with the types", "[library][c]") {
  eagerlm::test::TempDir dir;
  eagerlm::test::write_file((dir / "config.json"), eagerlm::test::tiny_config_json());
  const std::string config = (dir / "config.json");
  eagerlm_model* m = nullptr;
  // NULL options and NULL members: the defaults.
  REQUIRE(eagerlm_model_initialize_with(config.c_str(), 7, EAGERLM_DEVICE_CPU, nullptr, &m) == EAGERLM_OK);
  CHECK(std::string(eagerlm_model_gemm_math(m)) == "fp32");
  CHECK(std::string(eagerlm_model_weights(m)) == "f32");
  eagerlm_model_free(m);
  CHECK(std::string(eagerlm_model_gemm_math(nullptr)).empty());

  eagerlm_load_options options = {"bf16", "f16", "bf16"};
  if (__builtin_cpu_supports("avx512bf16")) {
    REQUIRE(eagerlm_model_initialize_with(config.c_str(), 7, EAGERLM_DEVICE_CPU, &options, &m) == EAGERLM_OK);
    CHECK(std::string(eagerlm_model_gemm_math(m)) == "bf16");
    CHECK(std::string(eagerlm_model_weights(m)) == "bf16");
    CHECK(std::string(eagerlm_model_kv_type(m)) == "f16");
    eagerlm_model_free(m);
  } else {
    CHECK_FAILS(eagerlm_model_initialize_with(config.c_str(), 7, EAGERLM_DEVICE_CPU, &options, &m),
                EAGERLM_ERROR_UNSUPPORTED, "AVX512_BF16");
  }
  options.weights = nullptr;  // random weights: f32, for which the CPU has no bf16 math
  CHECK_FAILS(eagerlm_model_initialize_with(config.c_str(), 7, EAGERLM_DEVICE_CPU, &options, &m),
              EAGERLM_ERROR_UNSUPPORTED, "for bf16 weights");
  CHECK(m == nullptr);
  options.gemm_math = "fp8";
  CHECK_FAILS(eagerlm_model_load_with(dir.path().c_str(), EAGERLM_DEVICE_CPU, &options, &m),
              EAGERLM_ERROR_INVALID_ARGUMENT, "gemm_math");
  CHECK_FAILS(eagerlm_model_load_with(nullptr, EAGERLM_DEVICE_CPU, nullptr, &m), EAGERLM_ERROR_INVALID_ARGUMENT,
              "eagerlm_model_load_with");
}

TEST_CASE("C: bad options are refused by name, leaving the options as they were", "[library][c]") {
  Handles h;
  REQUIRE(eagerlm_options_create(&h.options) == EAGERLM_OK);
  CHECK_FAILS(eagerlm_options_set(h.options, "tempurature", "0.5"), EAGERLM_ERROR_INVALID_ARGUMENT,
              "unknown option 'tempurature'");
  CHECK_FAILS(eagerlm_options_set(h.options, "temperature", "warm"), EAGERLM_ERROR_INVALID_ARGUMENT, "temperature");
  CHECK_FAILS(eagerlm_options_set(h.options, "temperature", "-1"), EAGERLM_ERROR_INVALID_ARGUMENT, "temperature");
  CHECK_FAILS(eagerlm_options_set(h.options, "temperature", "nan"), EAGERLM_ERROR_INVALID_ARGUMENT, "temperature");
  CHECK_FAILS(eagerlm_options_set(h.options, "temperature", "1e39"), EAGERLM_ERROR_INVALID_ARGUMENT, "temperature");
  CHECK_FAILS(eagerlm_options_set(h.options, "temperature", " 1"), EAGERLM_ERROR_INVALID_ARGUMENT, "temperature");
  CHECK_FAILS(eagerlm_options_set(h.options, "top_p", "1.5"), EAGERLM_ERROR_INVALID_ARGUMENT, "top_p");
  CHECK_FAILS(eagerlm_options_set(h.options, "min_p", "-0.1"), EAGERLM_ERROR_INVALID_ARGUMENT, "min_p");
  CHECK_FAILS(eagerlm_options_set(h.options, "repetition_penalty", "0"), EAGERLM_ERROR_INVALID_ARGUMENT,
              "repetition_penalty");
  CHECK_FAILS(eagerlm_options_set(h.options, "max_new_tokens", "-3"), EAGERLM_ERROR_INVALID_ARGUMENT, "max_new_tokens");
  CHECK_FAILS(eagerlm_options_set(h.options, "max_new_tokens", "12abc"), EAGERLM_ERROR_INVALID_ARGUMENT,
              "max_new_tokens");
  CHECK_FAILS(eagerlm_options_set(h.options, "max_new_tokens", "99999999999"), EAGERLM_ERROR_INVALID_ARGUMENT,
              "max_new_tokens");
  CHECK_FAILS(eagerlm_options_set(h.options, "top_k", ""), EAGERLM_ERROR_INVALID_ARGUMENT, "top_k");
  CHECK_FAILS(eagerlm_options_set(h.options, "seed", "18446744073709551616"), EAGERLM_ERROR_INVALID_ARGUMENT, "seed");
  CHECK_FAILS(eagerlm_options_set(h.options, "ignore_eos", "yes"), EAGERLM_ERROR_INVALID_ARGUMENT, "ignore_eos");
  CHECK_FAILS(eagerlm_options_set(h.options, nullptr, "1"), EAGERLM_ERROR_INVALID_ARGUMENT, "name is NULL");
  CHECK_FAILS(eagerlm_options_set(h.options, "seed", nullptr), EAGERLM_ERROR_INVALID_ARGUMENT, "value is NULL");
  CHECK_FAILS(eagerlm_options_set(nullptr, "seed", "1"), EAGERLM_ERROR_INVALID_ARGUMENT, "options is NULL");
  CHECK_FAILS(eagerlm_options_create(nullptr), EAGERLM_ERROR_INVALID_ARGUMENT, "options is NULL");
  for (const char* ok : {"0", "18446744073709551615"}) CHECK(eagerlm_options_set(h.options, "seed", ok) == EAGERLM_OK);
  CHECK(std::string(eagerlm_last_error()).empty());  // a success clears the message

  // After all the refusals the options are still the defaults: greedy, as with NULL options.
  REQUIRE(eagerlm_options_set(h.options, "max_new_tokens", "6") == EAGERLM_OK);
  REQUIRE(eagerlm_options_set(h.options, "ignore_eos", "true") == EAGERLM_OK);
  REQUIRE(eagerlm_generator_create(c_model(), 1, 32, &h.generator) == EAGERLM_OK);
  const char* prompt = "Hello world";
  REQUIRE(eagerlm_generate(h.generator, &prompt, nullptr, 1, h.options, nullptr, nullptr, &h.result) == EAGERLM_OK);
  std::vector<int32_t> ids(6);
  size_t count = 0;
  REQUIRE(eagerlm_result_ids(h.result, 0, ids.data(), ids.size(), &count) == EAGERLM_OK);
  REQUIRE(count == 6);
  const std::vector<int32_t> prompt_ids = {15496, 995};
  CHECK(ids == eagerlm::test::greedy_by_logits(eagerlm::test::tiny_model(), prompt_ids, 6));
}

TEST_CASE("C: generator and generate calls report bad arguments", "[library][c]") {
  Handles h;
  eagerlm_generator* g = reinterpret_cast<eagerlm_generator*>(0x1);
  CHECK_FAILS(eagerlm_generator_create(c_model(), 0, 16, &g), EAGERLM_ERROR_INVALID_ARGUMENT, "max_batch");
  CHECK(g == nullptr);
  CHECK_FAILS(eagerlm_generator_create(c_model(), 1, 1000, &g), EAGERLM_ERROR_INVALID_ARGUMENT, "max_length");
  CHECK_FAILS(eagerlm_generator_create(nullptr, 1, 16, &g), EAGERLM_ERROR_INVALID_ARGUMENT, "model is NULL");
  REQUIRE(eagerlm_generator_create(c_model(), 2, 16, &h.generator) == EAGERLM_OK);

  eagerlm_result* r = reinterpret_cast<eagerlm_result*>(0x1);
  const char* three[] = {"a", "b", "c"};
  REQUIRE(eagerlm_generate(h.generator, three, nullptr, 3, nullptr, nullptr, nullptr, &r) == EAGERLM_OK);
  CHECK(eagerlm_result_count(r) == 3);  // more prompts than max_batch: the third waits for a slot
  eagerlm_result_free(r);
  r = reinterpret_cast<eagerlm_result*>(0x1);
  const char* with_null[] = {"a", nullptr};
  CHECK_FAILS(eagerlm_generate(h.generator, with_null, nullptr, 2, nullptr, nullptr, nullptr, &r),
              EAGERLM_ERROR_INVALID_ARGUMENT, "prompt 1 is NULL");
  CHECK_FAILS(eagerlm_generate(h.generator, nullptr, nullptr, 1, nullptr, nullptr, nullptr, &r),
              EAGERLM_ERROR_INVALID_ARGUMENT, "prompts is NULL");
  CHECK_FAILS(eagerlm_generate(nullptr, three, nullptr, 1, nullptr, nullptr, nullptr, &r),
              EAGERLM_ERROR_INVALID_ARGUMENT, "generator is NULL");
  CHECK_FAILS(eagerlm_generate(h.generator, three, nullptr, 1, nullptr, nullptr, nullptr, nullptr),
              EAGERLM_ERROR_INVALID_ARGUMENT, "result is NULL");
  const char* bad_utf8 = "caf\xc3";
  CHECK_FAILS(eagerlm_generate(h.generator, &bad_utf8, nullptr, 1, nullptr, nullptr, nullptr, &r),
              EAGERLM_ERROR_INVALID_ARGUMENT, "prompt 0");
  std::string long_prompt;
  for (int i = 0; i < 20; ++i) long_prompt += " word";
  const char* lp = long_prompt.c_str();
  CHECK_FAILS(eagerlm_generate(h.generator, &lp, nullptr, 1, nullptr, nullptr, nullptr, &r),
              EAGERLM_ERROR_INVALID_ARGUMENT, "20 tokens");
  const int32_t bad_ids[] = {1, 50257};
  const size_t two = 2;
  CHECK_FAILS(eagerlm_generate_tokens(h.generator, bad_ids, &two, 1, nullptr, nullptr, nullptr, &r),
              EAGERLM_ERROR_INVALID_ARGUMENT, "50257");
  CHECK_FAILS(eagerlm_generate_tokens(h.generator, nullptr, &two, 1, nullptr, nullptr, nullptr, &r),
              EAGERLM_ERROR_INVALID_ARGUMENT, "ids is NULL");
  CHECK_FAILS(eagerlm_generate_tokens(h.generator, bad_ids, nullptr, 1, nullptr, nullptr, nullptr, &r),
              EAGERLM_ERROR_INVALID_ARGUMENT, "lengths is NULL");
  CHECK(r == nullptr);
  CHECK_FAILS(eagerlm_set_cpu_threads(-2), EAGERLM_ERROR_INVALID_ARGUMENT, "-2");
}

TEST_CASE("C: model calls report bad input", "[library][c]") {
  const eagerlm_model* m = c_model();
  size_t n = 0;
  int32_t ids[4];
  char text[8];
  float logits[4];
  CHECK_FAILS(eagerlm_tokenize(m, "x\xff", 2, 0, ids, 4, &n), EAGERLM_ERROR_INVALID_ARGUMENT, "UTF-8");
  CHECK_FAILS(eagerlm_tokenize(nullptr, "x", 1, 0, ids, 4, &n), EAGERLM_ERROR_INVALID_ARGUMENT, "model is NULL");
  CHECK_FAILS(eagerlm_tokenize(m, nullptr, 1, 0, ids, 4, &n), EAGERLM_ERROR_INVALID_ARGUMENT, "text is NULL");
  CHECK_FAILS(eagerlm_tokenize(m, "x", 1, 0, ids, 4, nullptr), EAGERLM_ERROR_INVALID_ARGUMENT, "count is NULL");
  const int32_t bad[] = {50256, 70000};
  CHECK_FAILS(eagerlm_detokenize(m, bad, 2, text, sizeof text, &n), EAGERLM_ERROR_INVALID_ARGUMENT, "70000");
  CHECK_FAILS(eagerlm_detokenize(m, nullptr, 2, text, sizeof text, &n), EAGERLM_ERROR_INVALID_ARGUMENT, "ids is NULL");
  const int32_t good[] = {464, 3290, 318};
  const size_t with_empty[] = {2, 0};
  std::vector<float> out(3 * 50257);
  CHECK_FAILS(eagerlm_logits(m, good, with_empty, 2, out.data(), out.size(), &n), EAGERLM_ERROR_INVALID_ARGUMENT,
              "sequence 1 is empty");
  const size_t one_of_two[] = {2};
  CHECK_FAILS(eagerlm_logits(m, bad, one_of_two, 1, out.data(), out.size(), &n), EAGERLM_ERROR_INVALID_ARGUMENT,
              "70000");
  CHECK_FAILS(eagerlm_logits(m, good, nullptr, 1, out.data(), out.size(), &n), EAGERLM_ERROR_INVALID_ARGUMENT,
              "lengths is NULL");
  CHECK_FAILS(eagerlm_logits(m, good, one_of_two, 1, logits, 4, &n), EAGERLM_ERROR_BUFFER_TOO_SMALL, "100514");
  CHECK(n == 2 * 50257);

  float scores[4];
  CHECK_FAILS(eagerlm_score(m, good, with_empty, 2, scores, 4, &n), EAGERLM_ERROR_INVALID_ARGUMENT,
              "sequence 1 is empty");
  CHECK_FAILS(eagerlm_score(m, bad, one_of_two, 1, scores, 4, &n), EAGERLM_ERROR_INVALID_ARGUMENT, "70000");
  CHECK_FAILS(eagerlm_score(m, good, nullptr, 1, scores, 4, &n), EAGERLM_ERROR_INVALID_ARGUMENT, "lengths is NULL");
  CHECK_FAILS(eagerlm_score(nullptr, good, one_of_two, 1, scores, 4, &n), EAGERLM_ERROR_INVALID_ARGUMENT,
              "model is NULL");
  CHECK_FAILS(eagerlm_score(m, good, one_of_two, 1, scores, 4, nullptr), EAGERLM_ERROR_INVALID_ARGUMENT,
              "count is NULL");
  const size_t three[] = {3};
  CHECK_FAILS(eagerlm_score(m, good, three, 1, scores, 1, &n), EAGERLM_ERROR_BUFFER_TOO_SMALL, "2 are needed");
  CHECK(n == 2);
}

TEST_CASE("C: eagerlm_score follows the size-query convention and agrees with the C++ API", "[library][c]") {
  const eagerlm_model* m = c_model();
  const int32_t seqs[] = {464, 3290, 318, 15496, 15496, 995};
  const size_t lengths[] = {3, 1, 2};
  size_t count = 99;
  REQUIRE(eagerlm_score(m, seqs, lengths, 3, nullptr, 0, &count) == EAGERLM_OK);
  REQUIRE(count == 2 + 0 + 1);
  std::vector<float> out(count, 1.0f);
  REQUIRE(eagerlm_score(m, seqs, lengths, 3, out.data(), out.size(), &count) == EAGERLM_OK);
  const auto want = eagerlm::test::tiny_model().score_batch({{464, 3290, 318}, {15496}, {15496, 995}});
  CHECK(std::vector<float>(out.begin(), out.begin() + 2) == want[0]);
  CHECK(std::vector<float>(out.begin() + 2, out.end()) == want[2]);
  REQUIRE(eagerlm_score(m, nullptr, nullptr, 0, nullptr, 0, &count) == EAGERLM_OK);  // no sequences
  CHECK(count == 0);
}

TEST_CASE("C: outputs follow the size-query convention", "[library][c]") {
  const eagerlm_model* m = c_model();
  CHECK(eagerlm_model_vocab_size(m) == 50257);
  CHECK(eagerlm_model_context_length(m) == 96);
  CHECK(eagerlm_model_eos_token_id(m) == 50256);
  CHECK(eagerlm_model_vocab_size(nullptr) == 0);
  CHECK(eagerlm_model_eos_token_id(nullptr) == -1);

  // Tokenize: ask for the count, then fill; a short buffer is refused and left untouched.
  const std::string text = "Hello world";
  size_t count = 99;
  REQUIRE(eagerlm_tokenize(m, text.data(), text.size(), 0, nullptr, 0, &count) == EAGERLM_OK);
  CHECK(count == 2);
  int32_t ids[2] = {-7, -7};
  CHECK(eagerlm_tokenize(m, text.data(), text.size(), 0, ids, 1, &count) == EAGERLM_ERROR_BUFFER_TOO_SMALL);
  CHECK(count == 2);
  CHECK(ids[0] == -7);
  REQUIRE(eagerlm_tokenize(m, text.data(), text.size(), 0, ids, 2, &count) == EAGERLM_OK);
  CHECK((ids[0] == 15496 && ids[1] == 995));
  const char special[] = "<|endoftext|>";
  REQUIRE(eagerlm_tokenize(m, special, sizeof special - 1, 1, ids, 2, &count) == EAGERLM_OK);
  CHECK((count == 1 && ids[0] == 50256));
  REQUIRE(eagerlm_tokenize(m, nullptr, 0, 0, nullptr, 0, &count) == EAGERLM_OK);  // empty text
  CHECK(count == 0);

  // Detokenize: *size is the length without the NUL; the buffer needs one more byte.
  const int32_t hello[] = {15496, 995};
  size_t size = 0;
  REQUIRE(eagerlm_detokenize(m, hello, 2, nullptr, 0, &size) == EAGERLM_OK);
  CHECK(size == 11);
  char buf[12];
  CHECK_FAILS(eagerlm_detokenize(m, hello, 2, buf, 11, &size), EAGERLM_ERROR_BUFFER_TOO_SMALL, "NUL");
  REQUIRE(eagerlm_detokenize(m, hello, 2, buf, 12, &size) == EAGERLM_OK);
  CHECK(std::string(buf) == "Hello world");

  // Logits: sequence after sequence, equal to the C++ API's.
  const int32_t seqs[] = {464, 3290, 318, 15496};
  const size_t lengths[] = {3, 1};
  REQUIRE(eagerlm_logits(m, seqs, lengths, 2, nullptr, 0, &count) == EAGERLM_OK);
  REQUIRE(count == 4 * 50257);
  std::vector<float> logits(count);
  REQUIRE(eagerlm_logits(m, seqs, lengths, 2, logits.data(), logits.size(), &count) == EAGERLM_OK);
  const auto want = eagerlm::test::tiny_model().logits_batch({{464, 3290, 318}, {15496}});
  CHECK(std::vector<float>(logits.begin(), logits.begin() + 3 * 50257) == want[0]);
  CHECK(std::vector<float>(logits.begin() + 3 * 50257, logits.end()) == want[1]);
}

namespace {

struct Streamed {
  std::vector<std::string> text{2};
  std::vector<int> tokens{0, 0};
};

int on_token(size_t index, int32_t token, const char* text, size_t text_size, void* user_data) {
  auto* s = static_cast<Streamed*>(user_data);
  if (text[text_size] != '\0') return 0;  // the text must be NUL-terminated
  s->text[index].append(text, text_size);
  if (token >= 0) ++s->tokens[index];
  return index == 1 && s->tokens[1] == 2 ? 0 : 1;  // stop the second prompt after 2 tokens
}

std::string result_text(const eagerlm_result* r, size_t i) {
  size_t size = 0;
  REQUIRE(eagerlm_result_text(r, i, nullptr, 0, &size) == EAGERLM_OK);
  std::string text(size + 1, '\0');
  REQUIRE(eagerlm_result_text(r, i, text.data(), text.size(), &size) == EAGERLM_OK);
  text.resize(size);
  return text;
}

}  // namespace

TEST_CASE("C: generation streams, stops and agrees with the C++ API", "[library][c]") {
  Handles h;
  REQUIRE(eagerlm_generator_create(c_model(), 2, 64, &h.generator) == EAGERLM_OK);
  REQUIRE(eagerlm_options_create(&h.options) == EAGERLM_OK);
  REQUIRE(eagerlm_options_set(h.options, "max_new_tokens", "8") == EAGERLM_OK);
  REQUIRE(eagerlm_options_set(h.options, "ignore_eos", "1") == EAGERLM_OK);
  REQUIRE(eagerlm_options_set(h.options, "temperature", "0.9") == EAGERLM_OK);
  REQUIRE(eagerlm_options_set(h.options, "top_k", "40") == EAGERLM_OK);
  REQUIRE(eagerlm_options_set(h.options, "seed", "5") == EAGERLM_OK);
  REQUIRE(eagerlm_options_set(h.options, "logprobs", "true") == EAGERLM_OK);
  // Prompts with explicit sizes need no NUL (the second is "Hi" out of "Hi there").
  const char* prompts[] = {"A long time ago", "Hi there"};
  const size_t sizes[] = {15, 2};
  Streamed streamed;
  REQUIRE(eagerlm_generate(h.generator, prompts, sizes, 2, h.options, on_token, &streamed, &h.result) == EAGERLM_OK);
  REQUIRE(eagerlm_result_count(h.result) == 2);

  eagerlm::Generator gen(eagerlm::test::tiny_model(), 2, 64);
  eagerlm::GenerateOptions o;
  o.max_new_tokens = 8;
  o.ignore_eos = true;
  o.temperature = 0.9f;
  o.top_k = 40;
  o.seed = 5;
  const auto want = gen.generate_batch({"A long time ago", "Hi"}, o);

  std::vector<int32_t> ids(8);
  size_t count = 0;
  REQUIRE(eagerlm_result_ids(h.result, 0, ids.data(), ids.size(), &count) == EAGERLM_OK);
  CHECK(ids == want[0].ids);
  CHECK(result_text(h.result, 0) == want[0].text);
  CHECK(result_text(h.result, 0) == streamed.text[0]);
  CHECK(result_text(h.result, 1) == streamed.text[1]);
  eagerlm_finish_reason why = EAGERLM_FINISH_EOS;
  REQUIRE(eagerlm_result_finish_reason(h.result, 0, &why) == EAGERLM_OK);
  CHECK(why == EAGERLM_FINISH_LENGTH);
  REQUIRE(eagerlm_result_finish_reason(h.result, 1, &why) == EAGERLM_OK);
  CHECK(why == EAGERLM_FINISH_CALLBACK);
  CHECK(std::string(eagerlm_finish_reason_name(why)) == "callback");
  REQUIRE(eagerlm_result_ids(h.result, 1, nullptr, 0, &count) == EAGERLM_OK);
  CHECK(count == 2);
  std::vector<float> logprobs(8);
  REQUIRE(eagerlm_result_logprobs(h.result, 0, logprobs.data(), logprobs.size(), &count) == EAGERLM_OK);
  CHECK(count == 8);
  for (float lp : logprobs) CHECK(lp <= 0.0f);

  CHECK_FAILS(eagerlm_result_text(h.result, 2, nullptr, 0, &count), EAGERLM_ERROR_INVALID_ARGUMENT, "index 2");
  CHECK_FAILS(eagerlm_result_ids(nullptr, 0, nullptr, 0, &count), EAGERLM_ERROR_INVALID_ARGUMENT, "result is NULL");
  CHECK_FAILS(eagerlm_result_finish_reason(h.result, 0, nullptr), EAGERLM_ERROR_INVALID_ARGUMENT, "reason is NULL");
  CHECK(eagerlm_result_count(nullptr) == 0);

  // Token-id prompts give what the same text gives.
  eagerlm_result* by_ids = nullptr;
  const int32_t prompt_ids[] = {15496};  // "Hello"
  const size_t one = 1;
  const char* hello = "Hello";
  eagerlm_result* by_text = nullptr;
  REQUIRE(eagerlm_generate_tokens(h.generator, prompt_ids, &one, 1, nullptr, nullptr, nullptr, &by_ids) == EAGERLM_OK);
  REQUIRE(eagerlm_generate(h.generator, &hello, nullptr, 1, nullptr, nullptr, nullptr, &by_text) == EAGERLM_OK);
  CHECK(result_text(by_ids, 0) == result_text(by_text, 0));
  eagerlm_result_free(by_ids);
  eagerlm_result_free(by_text);
}

TEST_CASE("C: the last error belongs to the thread that failed", "[library][c]") {
  eagerlm_model* m = nullptr;
  REQUIRE(eagerlm_model_load("/nonexistent/a", EAGERLM_DEVICE_CPU, &m) == EAGERLM_ERROR_IO);
  std::string other_before, other_after;
  std::thread([&] {
    other_before = eagerlm_last_error();
    eagerlm_model_load("/nonexistent/b", EAGERLM_DEVICE_CPU, &m);
    other_after = eagerlm_last_error();
  }).join();
  CHECK(other_before.empty());
  CHECK_THAT(other_after, Catch::Contains("/nonexistent/b"));
  CHECK_THAT(std::string(eagerlm_last_error()), Catch::Contains("/nonexistent/a"));
  CHECK(std::string(eagerlm_status_name(EAGERLM_ERROR_BUFFER_TOO_SMALL)) == "buffer too small");
  CHECK(std::string(eagerlm_version()) == EAGERLM_VERSION_STRING);
}

extern "C" int eagerlm_test_c_program(const char* config_path, char* text, size_t capacity);

TEST_CASE("C: a program written in C generates through the header", "[library][c]") {
  eagerlm::test::TempDir dir;
  eagerlm::test::write_file((dir / "config.json"), eagerlm::test::tiny_config_json());
  char text[512];
  REQUIRE(eagerlm_test_c_program((dir / "config.json").c_str(), text, sizeof text) == 0);
  eagerlm::Generator gen(eagerlm::test::tiny_model(), 1, 32);
  eagerlm::GenerateOptions o;
  o.max_new_tokens = 5;
  CHECK(std::string(text) == gen.generate("Hello, my name is", o).text);
}

TEST_CASE("C: a file the JSON library cannot take is an invalid file, not an internal error", "[library][c]") {
  eagerlm::test::TempDir dir;
  eagerlm_model* m = nullptr;
  eagerlm::test::write_file((dir / "config.json"),
                            R"({"n_layer": 2, "n_embd": 64, "n_head": 4, "n_positions": 32, "vocab_size": 50257,
                                "layer_norm_epsilon": 1e999})");
  CHECK_FAILS(eagerlm_model_initialize((dir / "config.json").c_str(), 0, EAGERLM_DEVICE_CPU, &m),
              EAGERLM_ERROR_INVALID_FILE, "config.json");
  CHECK(std::string(eagerlm_last_error()).find("[json.exception") == std::string::npos);
}
