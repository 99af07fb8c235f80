// Loading Hugging Face GPT-2 directories: round trips in F32/F16/BF16, bare and
// `transformer.`-prefixed names, tied lm_head, ignorable mask buffers, shards; and every
// model-level malformation (bad-inputs rows 15-17) rejected naming the tensor.
#include <catch2/catch.hpp>

#include "test/support/temp_dir.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <vector>

#include "engine/core/backend.h"
#include "engine/core/error.h"
#include "engine/io/safetensors_writer.h"
#include "kernels/cpu/cpu_ops.h"
#include "models/gpt2/checkpoint.h"
#include "models/gpt2/forward.h"
#include "test/models/test_models_util.h"

using namespace eagerlm;
using namespace eagerlm::gpt2;
namespace fs = std::filesystem;

namespace {

using test::TempDir;

struct Named {
  std::string name;
  Tensor tensor;
};

// Parameters as a list of (name, tensor) to edit before writing.
std::vector<Named> as_named(const ParameterTensors& p, const std::string& prefix = "") {
  std::vector<Named> out;
  for (size_t i = 0; i < p.specs.size(); ++i) out.push_back({prefix + p.specs[i].name, p.tensors[i]});
  return out;
}

Tensor converted(const Tensor& t, DType dtype) {
  Tensor out = Tensor::empty(t.shape(), dtype);
  convert_from_f32(t.f32(), dtype, out.raw(), size_t(t.numel()));
  return out;
}

void write_dir(const std::string& dir, const Config& c, const std::vector<Named>& tensors,
               const std::string& file = "model.safetensors") {
  std::vector<io::TensorToWrite> w;
  for (const auto& n : tensors) w.push_back({n.name, n.tensor.dtype(), n.tensor.shape().to_vector(), n.tensor.raw()});
  io::write_safetensors(dir + "/" + file, w);
  std::ofstream(dir + "/config.json") << c.to_json();
}

void expect_rejected(const std::string& dir, const std::string& needle) {
  try {
    load_checkpoint(dir);
    FAIL("accepted a checkpoint that should fail with: " << needle);
  } catch (const Error& e) {
    INFO(e.what());
    CHECK(e.code() == ErrorCode::kInvalidFile);
    CHECK_THAT(e.what(), Catch::Contains(needle));
  }
}

}  // namespace

TEST_CASE("save_checkpoint then load gives the same weights and the same logits", "[checkpoint]") {
  const Config c = test::tiny_config();
  const auto params = test::random_parameters(c, 3);
  TempDir dir;
  save_checkpoint(dir.str(), c, params);
  auto loaded = load_checkpoint(dir.str());
  CHECK(loaded.config.n_layer == c.n_layer);
  CHECK(loaded.config.n_embd == c.n_embd);
  REQUIRE(loaded.parameters.tensors.size() == params.tensors.size());
  for (size_t i = 0; i < params.tensors.size(); ++i) {
    REQUIRE(loaded.parameters.tensors[i].shape() == params.tensors[i].shape());
    CHECK(std::memcmp(loaded.parameters.tensors[i].raw(), params.tensors[i].raw(), params.tensors[i].nbytes()) == 0);
  }
  const std::vector<int32_t> tokens = {5, 9, 2, 77, 13};
  ForwardPass a(Model::from_parameters(c, params, Device::kCpu), {});
  ForwardPass b(Model::load(dir.str(), Device::kCpu), {});
  const Tensor la = a.step({{0, 0, tokens.data(), 5}}, LogitsFor::kLastToken);
  const Tensor lb = b.step({{0, 0, tokens.data(), 5}}, LogitsFor::kLastToken);
  CHECK(std::memcmp(la.raw(), lb.raw(), la.nbytes()) == 0);
  const auto summary = inspect_checkpoint(dir.str());
  CHECK(summary.parameter_count == parameter_count(c));
  CHECK(summary.dtypes == std::vector<DType>{DType::kF32});
}

TEST_CASE("a float32 model holds its layers as the backend reads them; its checkpoint is the config's layout",
          "[checkpoint]") {
  // Panels where the variant has AVX-512 (linear_row_panels.cpp), input-major elsewhere; the head
  // a copy in panels or wte itself. d = 64: inputs a multiple of 32 in every matrix.
  const Config c = test::tiny_config(2, 64, 4, 80, 97);
  const auto params = test::random_parameters(c, 6);
  const auto model = Model::from_parameters(c, params, Device::kCpu);
  const Backend& cpu_backend = backend_for(Device::kCpu);
  const auto canonical = parameter_specs(c);
  INFO("variant " << cpu::active_isa());
  for (size_t i = 0; i < canonical.size(); ++i) {
    if (canonical[i].matrix != WeightLayout::kInputMajor) continue;
    INFO(canonical[i].name);
    CHECK(model->parameters().specs[i].matrix ==
          cpu_backend.linear_layout(WeightType::kF32, canonical[i].shape[0], canonical[i].shape[1], GemmMath::kFp32));
  }
  const bool panels =
      cpu_backend.linear_layout(WeightType::kF32, c.n_embd, c.vocab_size, GemmMath::kFp32) == WeightLayout::kPanels;
  CHECK(model->weights().head.layout == (panels ? WeightLayout::kPanels : WeightLayout::kOutputMajor));
  CHECK((model->weights().head.data.raw() == model->weights().wte.data.raw()) == !panels);
  // d = 48: mlp.c_proj's 48 outputs padded to 64 in panels, which are no parameters.
  const Config narrow = test::tiny_config(1, 48, 3, 20, 97);
  CHECK(Model::from_parameters(narrow, test::random_parameters(narrow, 2), Device::kCpu)->parameter_count() ==
        parameter_count(narrow));
  TempDir dir;
  save_checkpoint(dir.str(), c, model->parameters());
  const ParameterTensors stored = load_checkpoint(dir.str()).parameters;
  for (size_t i = 0; i < canonical.size(); ++i) {
    INFO(canonical[i].name);
    REQUIRE(stored.tensors[i].shape() == canonical[i].shape);
    CHECK(std::memcmp(stored.tensors[i].raw(), params.tensors[i].raw(), params.tensors[i].nbytes()) == 0);
  }
}

TEST_CASE("a model whose matrices were copied keeps nothing of the block they came from", "[checkpoint]") {
  // All parameters over one borrowed block, as the initializer's one allocation or a checkpoint's
  // memory map holds them. Where the model copies its matrices (panels, or another type), the
  // block goes once the caller drops it; where it computes from them in place, the model holds it.
  const Config c = test::tiny_config(2, 64, 4, 80, 97);
  const auto params = test::random_parameters(c, 7);
  size_t bytes = 0;
  for (const Tensor& t : params.tensors) bytes += t.nbytes();
  auto block = std::make_shared<std::vector<float>>(bytes / sizeof(float));
  for (const WeightType type : {WeightType::kF32, WeightType::kBF16}) {
    INFO(weight_type_name(type) << " in variant " << cpu::active_isa());
    bool released = false;
    std::shared_ptr<const void> owner(block.get(), [&released, keep = block](const void*) { released = true; });
    ParameterTensors over_block;
    over_block.specs = params.specs;
    auto storage = Storage::borrow(block->data(), bytes, Device::kCpu, std::move(owner));
    size_t offset = 0;
    for (const Tensor& t : params.tensors) {
      over_block.tensors.push_back(Tensor::over(storage, offset, t.shape(), DType::kF32));
      over_block.tensors.back().copy_from(t);
      offset += t.nbytes();
    }
    storage.reset();  // the tensors hold it now
    ModelOptions options;
    options.weights = type;
    const auto model = Model::from_parameters(c, std::move(over_block), Device::kCpu, options);
    const bool copied =
        type != WeightType::kF32 ||
        backend_for(Device::kCpu).linear_layout(type, c.n_embd, c.n_embd, GemmMath::kFp32) != WeightLayout::kInputMajor;
    CHECK(released == copied);
    const std::vector<int32_t> tokens = {5, 9, 2};
    ForwardPass fwd(model, {});
    const Tensor logits = fwd.step({{0, 0, tokens.data(), 3}}, LogitsFor::kLastToken);
    CHECK(std::isfinite(logits.f32()[0]));
  }
}

TEST_CASE("F16 and BF16 checkpoints asked as f32 load converted to float32", "[checkpoint]") {
  const Config c = test::tiny_config(1);
  const auto params = test::random_parameters(c, 4);
  for (DType dt : {DType::kF16, DType::kBF16}) {
    TempDir dir;
    auto named = as_named(params);
    for (auto& n : named) n.tensor = converted(n.tensor, dt);
    write_dir(dir.str(), c, named);
    ModelOptions f32;
    f32.weights = WeightType::kF32;  // without it the matrices stay 16-bit (test_typed_weights.cpp)
    auto model = Model::load(dir.str(), Device::kCpu, f32);
    // As the config lays them out (the model may hold its linear layers in panels).
    const ParameterTensors held = in_config_layout(c, model->parameters());
    for (size_t i = 0; i < named.size(); ++i) {
      const Tensor& got = held.tensors[i];
      REQUIRE(got.dtype() == DType::kF32);
      std::vector<float> want(size_t(got.numel()));
      convert_to_f32(named[i].tensor.raw(), dt, want.data(), want.size());
      CHECK(std::memcmp(got.raw(), want.data(), got.nbytes()) == 0);
    }
  }
}

TEST_CASE("prefixed names, a tied lm_head and mask buffers are accepted", "[checkpoint]") {
  const Config c = test::tiny_config();
  const auto params = test::random_parameters(c, 5);
  TempDir dir;
  auto named = as_named(params, "transformer.");
  named.push_back({"lm_head.weight", params.tensors[0]});
  for (int l = 0; l < c.n_layer; ++l)
    named.push_back(
        {"transformer.h." + std::to_string(l) + ".attn.bias", Tensor::zeros({1, 1, c.n_positions, c.n_positions})});
  write_dir(dir.str(), c, named);
  const auto loaded = load_checkpoint(dir.str());
  CHECK(loaded.summary.prefixed);
  CHECK(std::memcmp(loaded.parameters.get("wte.weight").raw(), params.tensors[0].raw(), params.tensors[0].nbytes()) ==
        0);
}

TEST_CASE("sharded checkpoints load across shards", "[checkpoint]") {
  const Config c = test::tiny_config();
  const auto params = test::random_parameters(c, 6);
  TempDir dir;
  auto named = as_named(params);
  const size_t half = named.size() / 2;
  std::vector<Named> first(named.begin(), named.begin() + long(half)), second(named.begin() + long(half), named.end());
  write_dir(dir.str(), c, first, "model-00001-of-00002.safetensors");
  write_dir(dir.str(), c, second, "model-00002-of-00002.safetensors");
  std::string index = R"({"metadata": {"total_size": 0}, "weight_map": {)";
  for (size_t i = 0; i < named.size(); ++i)
    index += (i ? "," : "") +
             ("\"" + named[i].name + "\": \"model-0000" + (i < half ? "1" : "2") + "-of-00002.safetensors\"");
  std::ofstream(dir.str() + "/model.safetensors.index.json") << index << "}}";
  const auto loaded = load_checkpoint(dir.str());
  CHECK(loaded.summary.files.size() == 3);
  CHECK(std::memcmp(loaded.parameters.get("ln_f.bias").raw(), params.get("ln_f.bias").raw(),
                    params.get("ln_f.bias").nbytes()) == 0);
}

TEST_CASE("model-level malformations are rejected naming the tensor", "[checkpoint][errors]") {
  const Config c = test::tiny_config();
  const auto params = test::random_parameters(c, 7);
  auto with = [&](const std::function<void(std::vector<Named>&)>& edit, const std::string& needle, Config cfg) {
    TempDir dir;
    auto named = as_named(params);
    edit(named);
    write_dir(dir.str(), cfg, named);
    expect_rejected(dir.str(), needle);
  };
  auto drop = [](const std::string& name) {
    return [name](std::vector<Named>& v) {
      v.erase(std::remove_if(v.begin(), v.end(), [&](const Named& n) { return n.name == name; }), v.end());
    };
  };
  // Row 15: a required tensor missing; n_layer in config != layers in the file.
  with(drop("h.1.mlp.c_fc.bias"), "h.1.mlp.c_fc.bias", c);
  Config fewer = c;
  fewer.n_layer = 1;
  with([](std::vector<Named>&) {}, "n_layer", fewer);
  Config more = c;
  more.n_layer = 3;
  with([](std::vector<Named>&) {}, "h.2.", more);
  // Row 16: a Linear-layout (transposed) export; wpe with too few rows.
  with(
      [&](std::vector<Named>& v) {
        v[4].tensor = Tensor::zeros({3 * c.n_embd, c.n_embd});
      },
      "h.0.attn.c_attn.weight", c);
  with([&](std::vector<Named>& v) { v[1].tensor = Tensor::zeros({c.n_positions - 1, c.n_embd}); }, "wpe.weight", c);
  // Row 17: unknown tensors; a mix of prefixed and bare names.
  with([](std::vector<Named>& v) { v.push_back({"score.weight", Tensor::zeros({2, 2})}); }, "score.weight", c);
  with([](std::vector<Named>& v) { v[3].name = "transformer." + v[3].name; }, "mix", c);
  // An untied head; a parameter stored as an integer type.
  with(
      [&](std::vector<Named>& v) {
        v.push_back({"lm_head.weight", Tensor::zeros({c.vocab_size, c.n_embd})});
      },
      "lm_head", c);
  with([&](std::vector<Named>& v) { v[2].tensor = Tensor::zeros({c.n_embd}, DType::kI32); }, "h.0.ln_1.weight", c);
}

TEST_CASE("directories that are not GPT-2 checkpoints are rejected", "[checkpoint][errors]") {
  TempDir dir;
  CHECK_THROWS_AS(load_checkpoint(dir.str() + "/missing"), Error);
  CHECK_THROWS_AS(load_checkpoint(dir.str()), Error);  // empty directory
  std::ofstream(dir.str() + "/config.json") << "{\"n_layer\": 1}";
  std::ofstream(dir.str() + "/model.safetensors") << "short";
  CHECK_THROWS_AS(load_checkpoint(dir.str()), Error);
}

TEST_CASE("names from a file are escaped in errors, which stay one line", "[checkpoint][errors]") {
  const Config c = test::tiny_config();
  const auto params = test::random_parameters(c, 8);
  TempDir dir;
  auto named = as_named(params);
  named.push_back({"evil\nname\x1b[31m" + std::string(500, 'x'), Tensor::zeros({2})});
  write_dir(dir.str(), c, named);
  try {
    load_checkpoint(dir.str());
    FAIL("accepted an unknown tensor");
  } catch (const Error& e) {
    const std::string message = e.what();
    CHECK(message.find('\n') == std::string::npos);
    CHECK(message.find('\x1b') == std::string::npos);
    CHECK_THAT(message, Catch::Contains("evil\\nname\\x1b[31m"));
    CHECK(message.size() < 400);
  }
}
