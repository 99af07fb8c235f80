// Parameters as plain data through libeagerlm.so: ModelConfig, parameter_shapes (the dry run),
// initialize_parameters, and Model::from_parameters over caller-owned memory: used in place,
// kept alive as long as a model needs it, and checked as a checkpoint's tensors are.
#include <catch2/catch.hpp>

#include <eagerlm/eagerlm.hpp>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "test/library/library_test_support.h"

using namespace eagerlm;

namespace {

// An odd config: widths that are no power of two, an explicit MLP width, a small vocabulary.
ModelConfig odd_config() {
  return ModelConfig::from_json(R"({"n_layer": 2, "n_embd": 45, "n_head": 5, "n_inner": 77, "n_positions": 40,
                                    "vocab_size": 301, "eos_token_id": 300, "initializer_range": 0.3})");
}

struct Failure {
  ErrorCode code;
  std::string message;
};

Failure failure_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  FAIL("no eagerlm::Error thrown");
  return {ErrorCode::kInternal, ""};
}

TensorView& find(std::vector<TensorView>& views, const std::string& name) {
  for (auto& v : views)
    if (v.name == name) return v;
  FAIL("no tensor " << name);
  return views[0];
}

}  // namespace

TEST_CASE("ModelConfig reads config.json text, presets and files, and checks its values", "[library][parameters]") {
  const ModelConfig c = ModelConfig::from_json(R"({"hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4,
                                                   "max_position_embeddings": 32, "vocab_size": 100, "extra": [1]})");
  CHECK(c.n_embd == 64);
  CHECK(c.n_layer == 3);
  CHECK(c.n_head == 4);
  CHECK(c.n_positions == 32);
  CHECK(c.eos_token_id == 99);  // no eos_token_id: the last id of a vocabulary smaller than GPT-2's
  const ModelConfig again = ModelConfig::from_json(c.to_json());
  CHECK(again.to_json() == c.to_json());

  const ModelConfig gpt2 = ModelConfig::load("gpt2");
  CHECK(gpt2.n_layer == 12);
  CHECK(gpt2.vocab_size == 50257);
  test::TempDir dir;
  test::write_file(dir / "config.json", c.to_json());
  CHECK(ModelConfig::load(dir.str()).to_json() == c.to_json());

  Failure f = failure_of([] {
    ModelConfig::from_json(R"({"n_layer": 2, "n_embd": 64, "n_head": 5, "n_positions": 8,
                                                         "vocab_size": 10})",
                           "my config");
  });
  CHECK(f.code == ErrorCode::kInvalidArgument);
  CHECK_THAT(f.message, Catch::Contains("my config") && Catch::Contains("n_head"));
  ModelConfig negative = c;
  negative.n_layer = -1;
  f = failure_of([&] { parameter_shapes(negative); });
  CHECK(f.code == ErrorCode::kInvalidArgument);
  CHECK_THAT(f.message, Catch::Contains("n_layer"));
  CHECK(failure_of([&] { ModelConfig::load((dir / "absent.json")); }).code == ErrorCode::kIo);
  CHECK(failure_of([&] { ModelConfig::load("gpt3"); }).code == ErrorCode::kIo);
}

TEST_CASE("parameter_shapes lists every parameter without allocating", "[library][parameters]") {
  const ModelConfig c = odd_config();
  const std::vector<ParameterInfo> f32 = parameter_shapes(c);
  REQUIRE(f32.size() == 2 + 12 * 2 + 2);
  CHECK(f32[0].name == "wte.weight");
  CHECK(f32[0].shape == std::vector<int64_t>{301, 45});
  CHECK(f32[0].dtype == "F32");
  CHECK(f32[0].bytes == 301 * 45 * 4);
  CHECK(f32[1].shape == std::vector<int64_t>{40, 45});
  CHECK(f32[4].name == "h.0.attn.c_attn.weight");
  CHECK(f32[4].shape == std::vector<int64_t>{45, 135});
  CHECK(f32[10].name == "h.0.mlp.c_fc.weight");
  CHECK(f32[10].shape == std::vector<int64_t>{45, 77});
  CHECK(f32.back().name == "ln_f.bias");
  const std::vector<ParameterInfo> bf16 = parameter_shapes(c, "BF16");
  for (size_t i = 0; i < f32.size(); ++i) CHECK(bf16[i].bytes * 2 == f32[i].bytes);
  const Failure f = failure_of([&] { parameter_shapes(c, "F64"); });
  CHECK(f.code == ErrorCode::kInvalidArgument);
  CHECK_THAT(f.message, Catch::Contains("F64"));
}

TEST_CASE("initialize_parameters draws what Model::initialize computes with", "[library][parameters]") {
  const ModelConfig c = odd_config();
  const Parameters p = initialize_parameters(c, 5);
  REQUIRE(p.tensors.size() == parameter_shapes(c).size());
  for (const TensorView& v : p.tensors) CHECK(reinterpret_cast<uintptr_t>(v.data) % 64 == 0);
  const std::vector<int32_t> ids = {3, 1, 4, 1, 5, 9, 2, 6};
  const Model initialized = Model::initialize(c, 5);
  const Model given = Model::from_parameters(c, p.tensors, p.memory);
  CHECK(given.logits(ids) == initialized.logits(ids));
  CHECK(Model::initialize(c, 6).logits(ids) != initialized.logits(ids));
  CHECK(given.info().parameter_count == initialized.info().parameter_count);
  CHECK(given.info().source == "parameters given to from_parameters");
  CHECK(initialized.info().source == "config initialized from seed 5");

  // Storage types round float32 to nearest even; the model computes with the rounded values.
  const Parameters half = initialize_parameters(c, 5, "F16");
  CHECK(half.tensors[0].dtype == "F16");
  CHECK(half.tensors[0].bytes * 2 == p.tensors[0].bytes);
  const Model from_half = Model::from_parameters(c, half.tensors, half.memory);
  CHECK(from_half.logits(ids) != initialized.logits(ids));
  CHECK(failure_of([&] { initialize_parameters(c, 5, "f16"); }).code == ErrorCode::kInvalidArgument);
}

TEST_CASE("from_parameters uses float32 memory in place and holds its owner while needed", "[library][parameters]") {
  const ModelConfig c = odd_config();
  Parameters p = initialize_parameters(c, 9);
  const std::vector<int32_t> ids = {7, 7, 8};
  bool released = false;
  {
    // The owner the library holds: its release is observed through the deleter.
    std::shared_ptr<const void> owner(p.memory.get(), [&released, keep = p.memory](const void*) { released = true; });
    Model model = Model::from_parameters(c, p.tensors, std::move(owner));
    const std::vector<float> before = model.logits(ids);
    // Changing the memory changes the model: nothing was copied.
    float* ln_f_bias = static_cast<float*>(const_cast<void*>(find(p.tensors, "ln_f.bias").data));
    ln_f_bias[0] += 1.0f;
    CHECK(model.logits(ids) != before);
    ln_f_bias[0] -= 1.0f;
    CHECK(model.logits(ids) == before);

    Generator generator(model);
    model = Model::initialize(c, 1);  // the generator alone keeps the weights now
    CHECK_FALSE(released);
    GenerateOptions options;
    options.max_new_tokens = 3;
    CHECK(generator.generate_tokens({ids}, options)[0].ids.size() == 3);
  }
  CHECK(released);
}

TEST_CASE("from_parameters reads float32 matrices in place, where a loaded model holds them in panels",
          "[library][parameters]") {
  // 64 inputs: a width the CPU backend would hold in panels on AVX-512 (Backend::linear_layout).
  const ModelConfig c = ModelConfig::from_json(
      R"({"n_layer": 1, "n_embd": 64, "n_head": 4, "n_positions": 16, "vocab_size": 301, "eos_token_id": 300})");
  Parameters p = initialize_parameters(c, 4);
  const Model model = Model::from_parameters(c, p.tensors, p.memory);
  const std::vector<int32_t> ids = {7, 8};
  const std::vector<float> before = model.logits(ids);
  // A weight of a linear layer, and one of wte's row 7 (the embedding and the output head).
  for (const auto& [name, element] : {std::pair<const char*, int64_t>{"h.0.mlp.c_fc.weight", 1},
                                      std::pair<const char*, int64_t>{"wte.weight", 7 * 64 + 1}}) {
    INFO(name);
    float* w = static_cast<float*>(const_cast<void*>(find(p.tensors, name).data));
    const float kept = w[element];
    w[element] = kept + 0.5f;
    CHECK(model.logits(ids) != before);
    w[element] = kept;
    CHECK(model.logits(ids) == before);
  }
}

TEST_CASE("from_parameters accepts checkpoint naming: the prefix, a tied head, mask buffers", "[library][parameters]") {
  const ModelConfig c = odd_config();
  const Parameters p = initialize_parameters(c, 2);
  std::vector<TensorView> views = p.tensors;
  for (auto& v : views) v.name = "transformer." + v.name;
  views.push_back(p.tensors[0]);
  views.back().name = "lm_head.weight";
  const std::vector<float> mask(size_t(c.n_positions * c.n_positions), 1.0f);
  views.push_back({"transformer.h.1.attn.bias",
                   "F32",
                   {1, 1, c.n_positions, c.n_positions},
                   mask.data(),
                   mask.size() * sizeof(float)});
  const std::vector<int32_t> ids = {1, 2, 3};
  CHECK(Model::from_parameters(c, views, p.memory).logits(ids) == Model::initialize(c, 2).logits(ids));
}

TEST_CASE("from_parameters names the tensor and what was expected", "[library][parameters]") {
  const ModelConfig c = odd_config();
  const Parameters p = initialize_parameters(c, 3);
  const std::vector<double> doubles(45, 0.0);
  const std::vector<float> floats(301 * 45, 0.0f);  // enough for any tensor below
  auto rejected = [&](const std::function<void(std::vector<TensorView>&)>& edit,
                      const std::vector<std::string>& needles) {
    std::vector<TensorView> views = p.tensors;
    edit(views);
    const Failure f = failure_of([&] { Model::from_parameters(c, views, p.memory); });
    INFO(f.message);
    CHECK(f.code == ErrorCode::kInvalidArgument);
    for (const auto& needle : needles) CHECK_THAT(f.message, Catch::Contains(needle));
  };
  rejected([](auto& v) { v.erase(v.begin() + 5); }, {"missing tensor 'h.0.attn.c_attn.bias'"});
  rejected(
      [&](auto& v) {
        find(v, "h.1.ln_2.weight") = {"h.1.ln_2.weight", "F64", {45}, doubles.data(), 45 * 8};
      },
      {"'h.1.ln_2.weight'", "'F64'", "expected F32, F16 or BF16"});
  rejected(
      [&](auto& v) {
        find(v, "h.0.attn.c_attn.weight") = {"h.0.attn.c_attn.weight", "F32", {136, 45}, floats.data(), 136 * 45 * 4};
      },
      {"'h.0.attn.c_attn.weight'", "[136, 45]", "expected [45, 135]"});
  rejected([&](auto& v) { find(v, "wpe.weight").bytes -= 4; }, {"'wpe.weight'", "bytes", "expected 7200"});
  rejected([&](auto& v) { find(v, "ln_f.bias").data = nullptr; }, {"'ln_f.bias'", "no data"});
  rejected([&](auto& v) { v.push_back(v[3]); }, {"'h.0.ln_1.bias'", "twice"});
  rejected(
      [&](auto& v) {
        v.push_back({"score.weight", "F32", {1}, floats.data(), 4});
      },
      {"unexpected tensor 'score.weight'"});
  rejected([&](auto& v) { v[7].name = "transformer." + v[7].name; }, {"mix"});
  rejected(
      [&](auto& v) {
        v.push_back({"lm_head.weight", "F32", {301, 45}, floats.data(), 301 * 45 * 4});
      },
      {"lm_head.weight differs"});
  rejected([&](auto& v) { find(v, "h.1.mlp.c_proj.weight").shape = {77, 45, 1, 1, 1}; }, {"[77, 45, 1, 1, 1]"});
  ModelConfig bad = c;
  bad.n_head = 4;
  const Failure f = failure_of([&] { Model::from_parameters(bad, p.tensors, p.memory); });
  CHECK(f.code == ErrorCode::kInvalidArgument);
  CHECK_THAT(f.message, Catch::Contains("n_head"));
}
