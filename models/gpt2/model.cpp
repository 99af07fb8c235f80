#include "models/gpt2/model.h"

#include <algorithm>

#include "engine/core/backend.h"
#include "engine/core/error.h"
#include "engine/core/weight_convert.h"
#include "engine/ops/exec_context.h"
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

size_t bytes_of(const Tensor& t) { return t.defined() ? t.nbytes() : 0; }

// Every tensor of `params`, the scales included.
std::vector<Tensor*> owned_tensors(ParameterTensors& params) {
  std::vector<Tensor*> out;
  for (Tensor& t : params.tensors) out.push_back(&t);
  for (Tensor& s : params.scales)
    if (s.defined()) out.push_back(&s);
  return out;
}

[[noreturn]] void bad_parameter(const std::string& name, const std::string& what) {
  throw_error(ErrorCode::kInvalidArgument, "parameter " + name + ": " + what);
}

// The stored matrix `i` of `params` as a WeightTensor, its int8 scales checked.
WeightTensor stored_matrix(const ParameterTensors& params, size_t i) {
  const ParameterSpec& spec = params.specs[i];
  const Tensor& t = params.tensors[i];
  const auto type = weight_type_of(t.dtype());
  if (!type) bad_parameter(spec.name, std::string("dtype ") + dtype_name(t.dtype()) + " is no weight type");
  WeightTensor w{*type, *spec.matrix, t, params.scales_of(i)};
  if (*type == WeightType::kInt8) {
    const Shape want = scale_shape(t.shape(), w.layout);
    if (!int8_shape_ok(*type, w.inputs()))
      bad_parameter(spec.name, "int8 needs a multiple of " + std::to_string(kInt8Block) + " inputs, has " +
                                   std::to_string(w.inputs()));
    if (!w.scales.defined() || w.scales.dtype() != DType::kF32 || w.scales.shape() != want)
      bad_parameter(spec.name, "int8 weights need F32 scales " + want.to_string() + ", got " +
                                   (w.scales.defined() ? w.scales.describe() : std::string("none")));
  }
  return w;
}

}  // namespace

Model::Model(const Config& config, ParameterTensors params, Device device, WeightType weights, DType kv_type,
             GemmMath gemm_math, bool float32_in_place)
    : config_(config),
      params_(std::move(params)),
      device_(device),
      weight_type_(weights),
      kv_type_(kv_type),
      gemm_math_(gemm_math) {
  const auto& p = params_;
  weights_.wte = p.weight("wte.weight");
  const WeightTensor& wte = weights_.wte;
  const WeightLayout head_layout = backend_for(device).linear_layout(wte.type, wte.inputs(), wte.outputs(), gemm_math);
  const bool as_given = float32_in_place && wte.type == WeightType::kF32;
  weights_.head = head_layout == WeightLayout::kPanels && !as_given ? with_layout(wte, head_layout) : wte;
  weights_.wpe = p.get("wpe.weight");
  weights_.ln_f_weight = p.get("ln_f.weight");
  weights_.ln_f_bias = p.get("ln_f.bias");
  for (int64_t i = 0; i < config_.n_layer; ++i) {
    const std::string h = "h." + std::to_string(i) + ".";
    BlockWeights b;
    b.ln_1_weight = p.get(h + "ln_1.weight");
    b.ln_1_bias = p.get(h + "ln_1.bias");
    b.attn_weight = p.weight(h + "attn.c_attn.weight");
    b.attn_bias = p.get(h + "attn.c_attn.bias");
    b.attn_proj_weight = p.weight(h + "attn.c_proj.weight");
    b.attn_proj_bias = p.get(h + "attn.c_proj.bias");
    b.ln_2_weight = p.get(h + "ln_2.weight");
    b.ln_2_bias = p.get(h + "ln_2.bias");
    b.fc_weight = p.weight(h + "mlp.c_fc.weight");
    b.fc_bias = p.get(h + "mlp.c_fc.bias");
    b.mlp_proj_weight = p.weight(h + "mlp.c_proj.weight");
    b.mlp_proj_bias = p.get(h + "mlp.c_proj.bias");
    weights_.blocks.push_back(std::move(b));
  }
}

std::shared_ptr<const Model> Model::from_parameters(const Config& config, ParameterTensors params, Device device,
                                                    const ModelOptions& options) {
  config.validate("model config");
  if (options.kv_type != DType::kF32 && options.kv_type != DType::kBF16 && options.kv_type != DType::kF16)
    throw_error(ErrorCode::kInvalidArgument,
                std::string("KV cache type ") + dtype_name(options.kv_type) + ": expected F32, BF16 or F16");
  const auto specs = parameter_specs(config);
  if (params.specs.size() != specs.size() || params.tensors.size() != specs.size() ||
      (!params.scales.empty() && params.scales.size() != specs.size()))
    throw_error(ErrorCode::kInvalidArgument, "parameter list does not match the config");
  for (size_t i = 0; i < specs.size(); ++i)
    if (params.specs[i].name != specs[i].name)
      throw_error(ErrorCode::kInvalidArgument,
                  "parameter " + std::to_string(i) + " is " + params.specs[i].name + ", expected " + specs[i].name);
  params.specs = specs;  // the matrix roles come from the config, whatever the caller's specs say
  params.scales.resize(specs.size());
  const WeightType type = options.weights.value_or(stored_weight_type(params).value_or(WeightType::kF32));
  // The math against the device and the type, before any conversion: the backend decides.
  if (options.gemm_math != GemmMath::kFp32) ExecContext(device).set_gemm_math(options.gemm_math, type);
  const Backend& backend = backend_for(device);
  size_t total = 0, done = 0;
  for (size_t i = 0; i < specs.size(); ++i) total += params.tensors[i].nbytes() + bytes_of(params.scales_of(i));
  std::vector<Tensor> replaced;  // the matrices (and scales) now held in memory of their own
  for (size_t i = 0; i < specs.size(); ++i) {
    const ParameterSpec& spec = specs[i];
    if (params.tensors[i].shape() != spec.shape)
      throw_error(ErrorCode::kInvalidArgument, "parameter " + spec.name + ": expected shape " + spec.shape.to_string() +
                                                   ", got " + params.tensors[i].describe());
    const size_t bytes = params.tensors[i].nbytes() + bytes_of(params.scales_of(i));
    if (spec.matrix) {
      const WeightTensor source = stored_matrix(params, i);
      const double per_element = double(bytes) / double(std::max<int64_t>(1, spec.shape.numel()));
      WeightTensor w = convert_weight(source, type, device, spec.name.c_str(), [&](int64_t elements) {
        if (options.progress) options.progress(done + size_t(double(elements) * per_element), total);
      });
      // A linear layer held as the backend runs it fastest (its spec says how it is held).
      if (w.layout == WeightLayout::kInputMajor && !(options.float32_in_place && type == WeightType::kF32)) {
        const WeightLayout fastest = backend.linear_layout(type, w.inputs(), w.outputs(), options.gemm_math);
        if (fastest != w.layout) {
          w = with_layout(w, fastest);
          params.specs[i].matrix = fastest;
          params.specs[i].shape = w.data.shape();
          params.specs[i].panel_outputs = w.panel_outputs;
        }
      }
      if (!w.data.shares_storage_with(source.data)) replaced.push_back(source.data);
      if (source.scales.defined() && !w.scales.shares_storage_with(source.scales)) replaced.push_back(source.scales);
      params.tensors[i] = w.data;
      params.scales[i] = w.scales;
    } else {
      if (params.tensors[i].dtype() == DType::kI8 || params.scales_of(i).defined())
        bad_parameter(spec.name, "only weight matrices may be int8");
      params.tensors[i] = to_compute_tensor(params.tensors[i], device);
    }
    done += bytes;
    if (options.progress) options.progress(done, total);
  }
  // What still lies in a block whose matrices were replaced (the biases and norms, wte, beside
  // them in the initializer's one allocation or a checkpoint's memory map) is copied out, so that
  // the block is freed once the caller lets go of it: else a gpt2-xl initialized in float32 and
  // held in panels kept both while it decoded, 12.5 GB resident; 6.3-7.0 GB so (the block and the
  // panels are both resident while it loads).
  for (Tensor* t : owned_tensors(params)) {
    const bool in_replaced_block =
        std::any_of(replaced.begin(), replaced.end(), [&](const Tensor& r) { return t->shares_storage_with(r); });
    if (!in_replaced_block) continue;
    Tensor own = Tensor::empty(t->shape(), t->dtype(), t->device());
    own.copy_from(*t);
    *t = own;
  }
  return std::shared_ptr<const Model>(
      new Model(config, std::move(params), device, type, options.kv_type, options.gemm_math, options.float32_in_place));
}

std::shared_ptr<const Model> Model::load(const std::string& dir, Device device, const ModelOptions& options) {
  LoadedCheckpoint ckpt = load_checkpoint(dir);
  return from_parameters(ckpt.config, std::move(ckpt.parameters), device, options);
}

// The config's count: a matrix held in panels has zero padding past its outputs, no parameters.
int64_t Model::parameter_count() const { return gpt2::parameter_count(config_); }

size_t Model::matrix_bytes() const {
  size_t n = 0;
  for (size_t i = 0; i < params_.specs.size(); ++i)
    if (params_.specs[i].matrix) n += params_.tensors[i].nbytes() + bytes_of(params_.scales_of(i));
  return n;
}

}  // namespace eagerlm::gpt2
