#include "models/gpt2/parameters.h"

#include <cmath>

#include "engine/core/error.h"
#include "engine/core/weight_convert.h"

namespace eagerlm::gpt2 {

std::vector<ParameterSpec> parameter_specs(const Config& c) {
  const int64_t d = c.n_embd, m = c.mlp_width();
  const double sigma = c.initializer_range;
  const double sigma_residual = sigma / std::sqrt(2.0 * double(c.n_layer));
  std::vector<ParameterSpec> specs;
  specs.reserve(size_t(2 + 12 * c.n_layer + 2));
  auto add = [&](std::string name, Shape shape, InitKind init, std::optional<WeightLayout> matrix = std::nullopt) {
    const double s = init == InitKind::kNormal ? sigma : init == InitKind::kNormalResidual ? sigma_residual : 0.0;
    specs.push_back({std::move(name), shape, init, s, matrix});
  };
  constexpr auto kIn = WeightLayout::kInputMajor;
  add("wte.weight", {c.vocab_size, d}, InitKind::kNormal, WeightLayout::kOutputMajor);
  add("wpe.weight", {c.n_positions, d}, InitKind::kNormal);
  for (int64_t i = 0; i < c.n_layer; ++i) {
    const std::string p = "h." + std::to_string(i) + ".";
    add(p + "ln_1.weight", {d}, InitKind::kOnes);
    add(p + "ln_1.bias", {d}, InitKind::kZeros);
    add(p + "attn.c_attn.weight", {d, 3 * d}, InitKind::kNormal, kIn);
    add(p + "attn.c_attn.bias", {3 * d}, InitKind::kZeros);
    add(p + "attn.c_proj.weight", {d, d}, InitKind::kNormalResidual, kIn);
    add(p + "attn.c_proj.bias", {d}, InitKind::kZeros);
    add(p + "ln_2.weight", {d}, InitKind::kOnes);
    add(p + "ln_2.bias", {d}, InitKind::kZeros);
    add(p + "mlp.c_fc.weight", {d, m}, InitKind::kNormal, kIn);
    add(p + "mlp.c_fc.bias", {m}, InitKind::kZeros);
    add(p + "mlp.c_proj.weight", {m, d}, InitKind::kNormalResidual, kIn);
    add(p + "mlp.c_proj.bias", {d}, InitKind::kZeros);
  }
  add("ln_f.weight", {d}, InitKind::kOnes);
  add("ln_f.bias", {d}, InitKind::kZeros);
  return specs;
}

int64_t parameter_count(const Config& config) {
  int64_t n = 0;
  for (const auto& s : parameter_specs(config)) n += s.shape.numel();
  return n;
}

std::string scale_tensor_name(const std::string& weight_name) { return weight_name + "_scale"; }

const Tensor& ParameterTensors::get(const std::string& name) const {
  for (size_t i = 0; i < specs.size(); ++i)
    if (specs[i].name == name) return tensors[i];
  throw_error(ErrorCode::kInternal, "no parameter named " + name);
}

const Tensor& ParameterTensors::scales_of(size_t i) const {
  static const Tensor kNone;
  return i < scales.size() ? scales[i] : kNone;
}

WeightTensor ParameterTensors::weight(const std::string& name) const {
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].name != name) continue;
    const auto type = weight_type_of(tensors[i].dtype());
    if (!specs[i].matrix || !type) throw_error(ErrorCode::kInternal, "parameter " + name + " is no weight matrix");
    return {*type, *specs[i].matrix, tensors[i], scales_of(i), specs[i].panel_outputs};
  }
  throw_error(ErrorCode::kInternal, "no parameter named " + name);
}

size_t ParameterTensors::total_bytes() const {
  size_t n = 0;
  for (const auto& t : tensors) n += t.nbytes();
  for (const auto& t : scales)
    if (t.defined()) n += t.nbytes();
  return n;
}

std::optional<WeightType> stored_weight_type(const ParameterTensors& parameters) {
  std::optional<WeightType> shared;
  for (size_t i = 0; i < parameters.specs.size(); ++i) {
    if (!parameters.specs[i].matrix) continue;
    const auto type = weight_type_of(parameters.tensors[i].dtype());
    if (!type || (shared && *shared != *type)) return std::nullopt;
    shared = type;
  }
  return shared;
}

ParameterTensors in_config_layout(const Config& config, const ParameterTensors& parameters) {
  const std::vector<ParameterSpec> canonical = parameter_specs(config);
  if (canonical.size() != parameters.specs.size())
    throw_error(ErrorCode::kInternal, "in_config_layout: parameters do not match the config");
  ParameterTensors out = parameters;
  for (size_t i = 0; i < canonical.size(); ++i) {
    const ParameterSpec& held = parameters.specs[i];
    if (!held.matrix || !canonical[i].matrix || *held.matrix == *canonical[i].matrix) continue;
    const WeightTensor plain = with_layout(parameters.weight(held.name), *canonical[i].matrix);
    out.tensors[i] = plain.data;
    if (plain.scales.defined()) {
      out.scales.resize(canonical.size());
      out.scales[i] = plain.scales;
    }
    out.specs[i] = canonical[i];
  }
  return out;
}

}  // namespace eagerlm::gpt2
