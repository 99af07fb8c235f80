// A model whose weight matrices are bf16, f16 or int8 (models/gpt2/model.h, ModelOptions): the
// forward pass against the double-precision reference run on the same rounded or quantized
// weights (widened to float32 by plain code here), the model against its float32 twin, f32
// conversions that change nothing, checkpoints that keep their type, and int8 checkpoints.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "engine/core/backend.h"
#include "engine/core/dtype.h"
#include "engine/core/error.h"
#include "kernels/cpu/cpu_ops.h"
#include "models/gpt2/checkpoint.h"
#include "models/gpt2/forward.h"
#include "test/models/reference_gpt2.h"
#include "test/models/test_models_util.h"
#include "test/support/temp_dir.h"

using namespace eagerlm;
using namespace eagerlm::gpt2;

namespace {

// d = 64 and 4d = 256 inputs: whole int8 blocks of 32 in every matrix.
Config typed_config() { return test::tiny_config(2, 64, 4, 80, 97); }

// The weights `model` computes with, widened to float32 by plain loops: bf16/f16 exactly, int8 as
// float(q) * scale with the block layout of kernels/common/weights.h.
ParameterTensors widened(const Model& model) {
  const ParameterTensors p = in_config_layout(model.config(), model.parameters());
  ParameterTensors out;
  out.specs = p.specs;
  for (size_t i = 0; i < p.specs.size(); ++i) {
    const Tensor& t = p.tensors[i];
    Tensor f = Tensor::empty(t.shape());
    if (t.dtype() == DType::kI8) {
      const int8_t* q = t.data<int8_t>();
      const float* s = p.scales_of(i).f32();
      const int64_t rows = t.size(0), cols = t.size(1);
      const bool input_major = *p.specs[i].matrix == WeightLayout::kInputMajor;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          const float scale =
              input_major ? s[(r / kInt8Block) * cols + c] : s[r * (cols / kInt8Block) + c / kInt8Block];
          f.f32()[r * cols + c] = float(q[r * cols + c]) * scale;
        }
    } else {
      convert_to_f32(t.raw(), t.dtype(), f.f32(), size_t(t.numel()));
    }
    out.tensors.push_back(std::move(f));
  }
  return out;
}

std::vector<int32_t> tokens_for(const Config& c, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t(n);
  for (auto& x : t) x = int32_t(rng() % uint32_t(c.vocab_size));
  return t;
}

// All-position logits of one sequence, [T * vocab].
std::vector<float> logits_of(const std::shared_ptr<const Model>& model, const std::vector<int32_t>& tokens,
                             std::optional<DType> kv_type = std::nullopt) {
  ForwardLimits lim;
  lim.all_logits = true;
  lim.kv_type = kv_type;
  ForwardPass fwd(model, lim);
  const Tensor l = fwd.step({{0, 0, tokens.data(), int32_t(tokens.size())}}, LogitsFor::kAllTokens);
  return std::vector<float>(l.f32(), l.f32() + l.numel());
}

// The same logits one token per step after a prompt of `prefill` tokens (the decode kernels).
std::vector<float> decoded_logits(const std::shared_ptr<const Model>& model, const std::vector<int32_t>& tokens,
                                  int32_t prefill, std::optional<DType> kv_type = std::nullopt) {
  ForwardLimits lim;
  lim.kv_type = kv_type;
  ForwardPass fwd(model, lim);
  std::vector<float> out;
  const int64_t V = model->config().vocab_size;
  Tensor l = fwd.step({{0, 0, tokens.data(), prefill}}, LogitsFor::kLastToken);
  out.insert(out.end(), l.f32(), l.f32() + V);
  for (int32_t p = prefill; p < int32_t(tokens.size()); ++p) {
    l = fwd.step({{0, p, tokens.data() + p, 1}}, LogitsFor::kLastToken);
    out.insert(out.end(), l.f32(), l.f32() + V);
  }
  return out;
}

struct Worst {
  double relative = 0;  // max |a - b| / max(1, max |b|) over rows
  double top1 = 0;      // fraction of rows whose argmax agrees
};

Worst compare(const std::vector<float>& got, const std::vector<double>& want_flat, int64_t V) {
  Worst w;
  const size_t rows = want_flat.size() / size_t(V);
  size_t agree = 0;
  for (size_t r = 0; r < rows; ++r) {
    double scale = 1, err = 0;
    size_t ag = 0, aw = 0;
    for (int64_t v = 0; v < V; ++v) {
      const size_t i = r * size_t(V) + size_t(v);
      scale = std::max(scale, std::abs(want_flat[i]));
      const double e = std::abs(double(got[i]) - want_flat[i]);
      if (!(e <= err)) err = e;  // NaN-safe
      if (got[i] > got[r * size_t(V) + ag]) ag = size_t(v);
      if (want_flat[i] > want_flat[r * size_t(V) + aw]) aw = size_t(v);
    }
    w.relative = std::max(w.relative, err / scale);
    agree += ag == aw;
  }
  w.top1 = double(agree) / double(rows);
  return w;
}

std::vector<double> flat(const std::vector<std::vector<double>>& rows) {
  std::vector<double> out;
  for (const auto& r : rows) out.insert(out.end(), r.begin(), r.end());
  return out;
}

Tensor copy_of(const Tensor& t) {
  Tensor out = Tensor::empty(t.shape(), t.dtype());
  std::memcpy(out.raw(), t.raw(), t.nbytes());
  return out;
}

std::vector<double> flat(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

// The float32 tolerance of test_forward.cpp: the typed kernels widen each weight exactly (int8:
// float(q)·s, one rounding, as the plain loops above) and accumulate in float32, so against the
// reference on the same weights they differ from float32 weights only in summation order.
constexpr double kSameWeightsTolerance = 2e-4;

}  // namespace

TEST_CASE("typed weights match the double reference on the same rounded weights", "[typed][forward]") {
  const Config c = typed_config();
  const auto params = test::random_parameters(c, 21);
  const auto tokens = tokens_for(c, 29, 5);
  for (WeightType type : {WeightType::kBF16, WeightType::kF16, WeightType::kInt8}) {
    ModelOptions opt;
    opt.weights = type;
    const auto model = Model::from_parameters(c, params, Device::kCpu, opt);
    REQUIRE(model->weight_type() == type);
    const ParameterTensors ref_params = widened(*model);
    const auto want = flat(reference::Gpt2Reference(c, ref_params).logits(tokens));
    const Worst prefill = compare(logits_of(model, tokens), want, c.vocab_size);
    // Decoding gives the last prefill row (position 9), then one row per later position.
    const std::vector<double> want_decoded(want.begin() + 9 * c.vocab_size, want.end());
    const Worst decode = compare(decoded_logits(model, tokens, 10), want_decoded, c.vocab_size);
    INFO(weight_type_name(type) << ": prefill relative error " << prefill.relative << ", decode " << decode.relative);
    CHECK(prefill.relative <= kSameWeightsTolerance);
    CHECK(decode.relative <= kSameWeightsTolerance);
  }
}

TEST_CASE("typed weights stay close to the float32 model", "[typed][forward]") {
  // Each weight moves by at most its type's rounding: u = 2^-9 relative for bf16 (8 significant
  // bits), 2^-12 for f16 (11), and for int8 half a step of its block, max|w|/254 (~2^-8 of the
  // block's largest weight, so up to several 2^-8 of a typical one). A logit is a sum of such
  // products through 2 blocks whose layer norms keep activations O(1); the errors of independent
  // weights add like a random walk, so the logit error stays a small multiple of u times the logit
  // scale. Limits: 16u relative (measured values are printed; a wrong scale or block index gives
  // O(1)), and for int8 32 · 2^-8.
  const Config c = typed_config();
  const auto params = test::random_parameters(c, 22);
  const auto tokens = tokens_for(c, 40, 6);
  const auto f32_model = Model::from_parameters(c, params, Device::kCpu);
  const auto want = flat(logits_of(f32_model, tokens));
  struct Case {
    WeightType type;
    double limit;
  };
  for (const Case& k :
       {Case{WeightType::kBF16, 16 * std::ldexp(1.0, -9)}, Case{WeightType::kF16, 16 * std::ldexp(1.0, -12)},
        Case{WeightType::kInt8, 32 * std::ldexp(1.0, -8)}}) {
    ModelOptions opt;
    opt.weights = k.type;
    const Worst w =
        compare(logits_of(Model::from_parameters(c, params, Device::kCpu, opt), tokens), want, c.vocab_size);
    INFO(weight_type_name(k.type) << " against f32: max relative error " << w.relative << " (limit " << k.limit
                                  << "), top-1 agreement " << w.top1);
    CHECK(w.relative <= k.limit);
    CHECK(w.top1 >= 0.9);
  }
}

TEST_CASE("f32 weights are the float32 path bit for bit", "[typed][forward]") {
  const Config c = typed_config();
  const auto params = test::random_parameters(c, 23);
  const auto tokens = tokens_for(c, 17, 7);
  // Asking f32 of float32 parameters changes nothing; and a bf16 model converted to f32 at load
  // equals a model of the widened bf16 parameters.
  ModelOptions f32;
  f32.weights = WeightType::kF32;
  CHECK(logits_of(Model::from_parameters(c, params, Device::kCpu), tokens) ==
        logits_of(Model::from_parameters(c, params, Device::kCpu, f32), tokens));
  ModelOptions bf16;
  bf16.weights = WeightType::kBF16;
  const auto bf16_model = Model::from_parameters(c, params, Device::kCpu, bf16);
  // bf16 matrices (in the config's layout: the model may hold them in panels), float32 rest.
  ParameterTensors stored = in_config_layout(c, bf16_model->parameters());
  const auto widened_model = Model::from_parameters(c, widened(*bf16_model), Device::kCpu);
  const auto back = Model::from_parameters(c, stored, Device::kCpu, f32);
  CHECK(back->weight_type() == WeightType::kF32);
  CHECK(logits_of(back, tokens) == logits_of(widened_model, tokens));
}

TEST_CASE("bf16 math: linear layers held as the backend prefers, near the reference, saved in the config's layout",
          "[typed][forward][checkpoint]") {
  const Config c = typed_config();
  const auto params = test::random_parameters(c, 26);
  const auto tokens = tokens_for(c, 40, 6);
  ModelOptions fp32_math, bf16_math;
  fp32_math.weights = bf16_math.weights = WeightType::kBF16;
  bf16_math.gemm_math = GemmMath::kBf16;
  if (!cpu::has_bf16_gemm()) {
    CHECK_THROWS_AS(Model::from_parameters(c, params, Device::kCpu, bf16_math), Error);
    WARN("skipped: the " << cpu::active_isa() << " kernels have no bf16 GEMM");
    return;
  }
  const auto same_weights = Model::from_parameters(c, params, Device::kCpu, fp32_math);
  const auto model = Model::from_parameters(c, params, Device::kCpu, bf16_math);
  CHECK(model->gemm_math() == GemmMath::kBf16);
  // d = 64 and 4d = 256 inputs, 64 to 256 outputs: every matrix fits every layout.
  const Backend& cpu_backend = backend_for(Device::kCpu);
  INFO("variant " << cpu::active_isa() << ", AMX " << cpu::amx_enabled());
  const auto canonical = parameter_specs(c);
  int rearranged = 0;
  for (size_t i = 0; i < canonical.size(); ++i) {
    const ParameterSpec& held = model->parameters().specs[i];
    INFO(held.name);
    if (canonical[i].matrix != WeightLayout::kInputMajor) {
      CHECK(held.matrix == canonical[i].matrix);
      CHECK(held.shape == canonical[i].shape);
      continue;
    }
    const int64_t in = canonical[i].shape[0], out = canonical[i].shape[1];
    const WeightLayout want = cpu_backend.linear_layout(WeightType::kBF16, in, out, GemmMath::kBf16);
    CHECK(held.matrix == want);
    CHECK(held.shape == (want == WeightLayout::kInputMajor    ? canonical[i].shape
                         : want == WeightLayout::kOutputMajor ? Shape{out, in}
                                                              : Shape{out / kPanelColumns, in * kPanelColumns}));
    rearranged += want != WeightLayout::kInputMajor;
  }
  // With a bf16 GEMM every engine reads some layout in place: AMX output-major, vdpbf16ps panels.
  CHECK(rearranged == 4 * c.n_layer);
  // The head: wte itself, or a copy in panels where the backend reads those (vocab outputs, the
  // last panel padded).
  const WeightTensor& head = model->weights().head;
  const WeightLayout head_layout =
      cpu_backend.linear_layout(WeightType::kBF16, c.n_embd, c.vocab_size, GemmMath::kBf16);
  CHECK(head.layout == (head_layout == WeightLayout::kPanels ? head_layout : WeightLayout::kOutputMajor));
  CHECK(head.outputs() == c.vocab_size);
  CHECK(head.inputs() == c.n_embd);
  // Under fp32 math the head is a copy only where the backend holds bf16 layers in panels then too.
  const bool fp32_panels =
      cpu_backend.linear_layout(WeightType::kBF16, c.n_embd, c.vocab_size, GemmMath::kFp32) == WeightLayout::kPanels;
  CHECK((same_weights->weights().head.data.raw() == same_weights->weights().wte.data.raw()) == !fp32_panels);
  // Against the double reference on the same bf16 weights: activations rounded to bf16 (8
  // significant bits) before each product move each logit by a few 2^-8 of the largest.
  const auto want = flat(reference::Gpt2Reference(c, widened(*same_weights)).logits(tokens));
  const Worst prefill = compare(logits_of(model, tokens), want, c.vocab_size);
  const std::vector<double> want_decoded(want.begin() + 9 * c.vocab_size, want.end());
  const Worst decode = compare(decoded_logits(model, tokens, 10), want_decoded, c.vocab_size);
  INFO("prefill relative error " << prefill.relative << ", decode " << decode.relative);
  CHECK(prefill.relative <= 8 * std::ldexp(1.0, -8));
  CHECK(decode.relative <= 8 * std::ldexp(1.0, -8));
  CHECK(prefill.relative > kSameWeightsTolerance);  // the bf16 products ran
  // A checkpoint of it is the checkpoint of the same weights held as the config lays them out.
  test::TempDir dir;
  save_checkpoint(dir.str(), c, model->parameters());
  const auto back = Model::load(dir.str(), Device::kCpu);
  const ParameterTensors got = in_config_layout(c, back->parameters());
  const ParameterTensors ref = in_config_layout(c, same_weights->parameters());
  for (size_t i = 0; i < canonical.size(); ++i) {
    INFO(canonical[i].name);
    CHECK(got.specs[i].shape == canonical[i].shape);
    REQUIRE(got.tensors[i].nbytes() == ref.tensors[i].nbytes());
    CHECK(std::memcmp(got.tensors[i].raw(), ref.tensors[i].raw(), got.tensors[i].nbytes()) == 0);
  }
}

TEST_CASE("bf16 and f16 checkpoints keep their type unless told otherwise", "[typed][checkpoint]") {
  const Config c = typed_config();
  const auto params = test::random_parameters(c, 24);
  for (DType dt : {DType::kBF16, DType::kF16}) {
    ParameterTensors stored;
    stored.specs = params.specs;
    for (const Tensor& t : params.tensors) {
      Tensor h = Tensor::empty(t.shape(), dt);
      convert_from_f32(t.f32(), dt, h.raw(), size_t(t.numel()));
      stored.tensors.push_back(std::move(h));
    }
    test::TempDir dir;
    save_checkpoint(dir.str(), c, stored);
    const auto kept = Model::load(dir.str(), Device::kCpu);
    CHECK(kept->weight_type() == *weight_type_of(dt));
    const ParameterTensors p = in_config_layout(c, kept->parameters());
    for (size_t i = 0; i < p.specs.size(); ++i) {
      INFO(p.specs[i].name);
      // Matrices as stored (no widening; bf16 ones the CPU may hold in panels), the rest float32.
      CHECK(p.tensors[i].dtype() == (p.specs[i].matrix ? dt : DType::kF32));
      if (p.specs[i].matrix)
        CHECK(std::memcmp(p.tensors[i].raw(), stored.tensors[i].raw(), p.tensors[i].nbytes()) == 0);
    }
    CHECK(kept->matrix_bytes() * 2 < Model::from_parameters(c, params, Device::kCpu)->matrix_bytes() + 1);
    ModelOptions f32;
    f32.weights = WeightType::kF32;
    const auto wide = Model::load(dir.str(), Device::kCpu, f32);
    CHECK(wide->weight_type() == WeightType::kF32);
    for (const Tensor& t : wide->parameters().tensors) CHECK(t.dtype() == DType::kF32);
    CHECK(inspect_checkpoint(dir.str()).weights == weight_type_of(dt));
  }
}

TEST_CASE("an int8 checkpoint loads as written, with no conversion", "[typed][checkpoint]") {
  const Config c = typed_config();
  const auto params = test::random_parameters(c, 25);
  const auto tokens = tokens_for(c, 21, 8);
  ModelOptions int8;
  int8.weights = WeightType::kInt8;
  const auto quantized = Model::from_parameters(c, params, Device::kCpu, int8);
  // Every matrix held as the backend reads int8 fastest (panels with AVX-512), the head too.
  const Backend& cpu_backend = backend_for(Device::kCpu);
  const auto canonical = parameter_specs(c);
  INFO("variant " << cpu::active_isa());
  for (size_t i = 0; i < canonical.size(); ++i) {
    if (canonical[i].matrix != WeightLayout::kInputMajor) continue;
    const int64_t in = canonical[i].shape[0], out = canonical[i].shape[1];
    INFO(canonical[i].name);
    CHECK(quantized->parameters().specs[i].matrix ==
          cpu_backend.linear_layout(WeightType::kInt8, in, out, GemmMath::kFp32));
  }
  const bool panels =
      cpu_backend.linear_layout(WeightType::kInt8, c.n_embd, c.vocab_size, GemmMath::kFp32) == WeightLayout::kPanels;
  const WeightTensor& head = quantized->weights().head;
  CHECK(head.layout == (panels ? WeightLayout::kPanels : WeightLayout::kOutputMajor));
  CHECK(head.outputs() == c.vocab_size);
  CHECK(head.scales.numel() == (panels ? panel_count(c.vocab_size) * c.n_embd : c.vocab_size * c.n_embd / kInt8Block));
  test::TempDir dir;
  save_checkpoint(dir.str(), c, quantized->parameters());
  // The checkpoint holds the quantized weights and scales in the config's layout, byte for byte.
  {
    const ParameterTensors stored = load_checkpoint(dir.str()).parameters;
    const ParameterTensors held = in_config_layout(c, quantized->parameters());
    for (size_t i = 0; i < canonical.size(); ++i) {
      if (!canonical[i].matrix) continue;
      INFO(canonical[i].name);
      CHECK(stored.tensors[i].shape() == canonical[i].shape);
      REQUIRE(stored.tensors[i].nbytes() == held.tensors[i].nbytes());
      CHECK(std::memcmp(stored.tensors[i].raw(), held.tensors[i].raw(), held.tensors[i].nbytes()) == 0);
      REQUIRE(stored.scales_of(i).nbytes() == held.scales_of(i).nbytes());
      CHECK(std::memcmp(stored.scales_of(i).raw(), held.scales_of(i).raw(), held.scales_of(i).nbytes()) == 0);
    }
  }
  const CheckpointSummary summary = inspect_checkpoint(dir.str());
  CHECK(summary.weights == WeightType::kInt8);
  CHECK(summary.scale_count > 0);
  const auto loaded = Model::load(dir.str(), Device::kCpu);
  CHECK(loaded->weight_type() == WeightType::kInt8);
  CHECK(logits_of(loaded, tokens) == logits_of(quantized, tokens));
  // Asked as f32, it runs the dequantized weights.
  ModelOptions f32;
  f32.weights = WeightType::kF32;
  const auto dequantized = Model::load(dir.str(), Device::kCpu, f32);
  CHECK(logits_of(dequantized, tokens) ==
        logits_of(Model::from_parameters(c, widened(*quantized), Device::kCpu), tokens));
}

TEST_CASE("int8 refuses matrices without whole blocks, naming the parameter", "[typed][errors]") {
  const Config c = test::tiny_config(1, 48, 3, 20, 33);  // 48 inputs: not a multiple of 32
  ModelOptions int8;
  int8.weights = WeightType::kInt8;
  try {
    Model::from_parameters(c, test::random_parameters(c, 26), Device::kCpu, int8);
    FAIL("int8 of 48-input matrices was accepted");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidArgument);
    CHECK_THAT(e.what(), Catch::Contains("wte.weight") && Catch::Contains("32"));
  }
}

TEST_CASE("a bf16 or f16 KV cache stays close to the float32 cache", "[typed][cache]") {
  // Keys and values are rounded once when written (relative 2^-9 for bf16, 2^-12 for f16); the
  // attention scores and outputs move by about that much of their scale, then through the later
  // layers as the weights' rounding does above: the same 16u limit.
  const Config c = typed_config();
  const auto params = test::random_parameters(c, 27);
  const auto model = Model::from_parameters(c, params, Device::kCpu);
  const auto tokens = tokens_for(c, 33, 9);
  const auto want = flat(decoded_logits(model, tokens, 5));
  for (DType kv : {DType::kBF16, DType::kF16}) {
    const double u = kv == DType::kBF16 ? std::ldexp(1.0, -9) : std::ldexp(1.0, -12);
    const Worst w = compare(decoded_logits(model, tokens, 5, kv), want, c.vocab_size);
    INFO(dtype_name(kv) << " cache against f32: max relative error " << w.relative << ", top-1 " << w.top1);
    CHECK(w.relative <= 16 * u);
    CHECK(w.relative > 0);  // the cache really is narrower
  }
}

TEST_CASE("malformed int8 scales are rejected naming the scale tensor", "[typed][checkpoint][errors]") {
  const Config c = typed_config();
  ModelOptions int8;
  int8.weights = WeightType::kInt8;
  const auto quantized = Model::from_parameters(c, test::random_parameters(c, 28), Device::kCpu, int8);
  const std::string name = "h.1.mlp.c_proj.weight_scale";
  auto with = [&](const std::function<void(ParameterTensors&, size_t)>& edit, const std::string& needle) {
    // As a checkpoint holds them (the model may hold its matrices in panels).
    ParameterTensors p = in_config_layout(c, quantized->parameters());
    size_t i = 0;
    while (p.specs[i].name != "h.1.mlp.c_proj.weight") ++i;
    p.scales[i] = copy_of(p.scales[i]);  // edited below: the model's own stays intact
    edit(p, i);
    test::TempDir dir;
    save_checkpoint(dir.str(), c, p);
    try {
      load_checkpoint(dir.str());
      FAIL("accepted: " << needle);
    } catch (const Error& e) {
      INFO(e.what());
      CHECK(e.code() == ErrorCode::kInvalidFile);
      CHECK_THAT(e.what(), Catch::Contains(name) && Catch::Contains(needle));
    }
  };
  with([](ParameterTensors& p, size_t i) { p.scales[i].f32()[3] = -1.0f; }, ">= 0");
  with([](ParameterTensors& p, size_t i) { p.scales[i].f32()[0] = std::nanf(""); }, "finite");
  with([](ParameterTensors& p, size_t i) { p.scales[i] = copy_of(p.scales[i].slice(0, 0, 1)); }, "shape");
  with([](ParameterTensors& p, size_t i) { p.scales[i] = Tensor(); }, "missing");
}
