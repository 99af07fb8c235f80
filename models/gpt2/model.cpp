#include "models/gpt2/model.h"

#include "engine/core/error.h"
#include "models/gpt2/checkpoint.h"

namespace eagerlm::gpt2 {

namespace {

// float32 on `device`: converts storage dtypes on the host, then uploads once.
Tensor to_compute_tensor(const Tensor& t, Device device) {
  Tensor f32 = t;
  if (t.dtype() != DType::kF32) {
    EAGERLM_ASSERT(t.device() == Device::kCpu);
    f32 = Tensor::empty(t.shape(), DType::kF32, Device::kCpu);
    convert_to_f32(t.raw(), t.dtype(), f32.f32(), size_t(t.numel()));
  }
  return f32.device() == device ? f32 : f32.to(device);
}

}  // namespace

Model::Model(const Config& config, ParameterTensors params, Device device)
    : config_(config), params_(std::move(params)), device_(device) {
  const auto& p = params_;
  weights_.wte = p.get("wte.weight");
  weights_.wpe = p.get("wpe.weight");
  weights_.ln_f_weight = p.get("ln_f.weight");
  weights_.ln_f_bias = p.get("ln_f.bias");
  for (int64_t i = 0; i < config_.n_layer; ++i) {
    const std::string h = "h." + std::to_string(i) + ".";
    BlockWeights b;
    b.ln_1_weight = p.get(h + "ln_1.weight");
    b.ln_1_bias = p.get(h + "ln_1.bias");
    b.attn_weight = p.get(h + "attn.c_attn.weight");
    b.attn_bias = p.get(h + "attn.c_attn.bias");
    b.attn_proj_weight = p.get(h + "attn.c_proj.weight");
    b.attn_proj_bias = p.get(h + "attn.c_proj.bias");
    b.ln_2_weight = p.get(h + "ln_2.weight");
    b.ln_2_bias = p.get(h + "ln_2.bias");
    b.fc_weight = p.get(h + "mlp.c_fc.weight");
    b.fc_bias = p.get(h + "mlp.c_fc.bias");
    b.mlp_proj_weight = p.get(h + "mlp.c_proj.weight");
    b.mlp_proj_bias = p.get(h + "mlp.c_proj.bias");
    weights_.blocks.push_back(std::move(b));
  }
}

std::shared_ptr<const Model> Model::from_parameters(const Config& config, ParameterTensors params,
                                                    Device device, const ProgressFn& progress) {
  config.validate("model config");
  const auto specs = parameter_specs(config);
  if (params.specs.size() != specs.size() || params.tensors.size() != specs.size())
    throw_error(ErrorCode::kInvalidArgument, "parameter list does not match the config");
  size_t total = 0, done = 0;
  for (const auto& t : params.tensors) total += size_t(t.numel()) * 4;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (params.specs[i].name != specs[i].name || params.tensors[i].shape() != specs[i].shape)
      throw_error(ErrorCode::kInvalidArgument,
                  "parameter " + specs[i].name + ": expected shape " + specs[i].shape.to_string() +
                      ", got " + params.tensors[i].describe());
    params.tensors[i] = to_compute_tensor(params.tensors[i], device);
    done += size_t(params.tensors[i].numel()) * 4;
    if (progress) progress(done, total);
  }
  return std::shared_ptr<const Model>(new Model(config, std::move(params), device));
}

std::shared_ptr<const Model> Model::load(const std::string& dir, Device device, const ProgressFn& progress) {
  LoadedCheckpoint ckpt = load_checkpoint(dir);
  return from_parameters(ckpt.config, std::move(ckpt.parameters), device, progress);
}

int64_t Model::parameter_count() const {
  int64_t n = 0;
  for (const auto& t : params_.tensors) n += t.numel();
  return n;
}

}  // namespace eagerlm::gpt2
