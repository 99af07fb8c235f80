// eagerlm::Model: loading or initializing a GPT-2 model with its tokenizer, tokenizing, logits
// and scores for a batch of sequences (a fresh forward pass per call, so calls never share state).
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "api/library_internal.h"
#include "eagerlm/model.hpp"
#include "engine/core/device.h"
#include "engine/core/dtype.h"
#include "engine/core/weight_tensor.h"
#include "engine/ops/exec_context.h"
#include "engine/generation/scoring.h"
#include "engine/generation/step_packer.h"
#include "models/gpt2/forward.h"
#include "models/gpt2/gpt2_step_model.h"

namespace eagerlm {

namespace {

void require_device(Device device) {
  if (device != Device::kCpu && device != Device::kCuda)
    throw Error(ErrorCode::kInvalidArgument, "device: expected cpu or cuda, got value " + std::to_string(int(device)));
  if (device == Device::kCuda && !cuda_available())
    throw Error(ErrorCode::kUnsupported, std::string("device cuda: ") + cuda_unavailable_reason());
}

std::shared_ptr<const Model::Impl> make_impl(gpt2::LoadedModel&& loaded) {
  return std::make_shared<const Model::Impl>(Model::Impl{std::move(loaded.model), std::move(loaded.tokenizer),
                                                         std::move(loaded.description),
                                                         std::move(loaded.text_problem)});
}

// The model of `source`, through the one loader every front end uses.
std::shared_ptr<const Model::Impl> load_impl(const gpt2::ModelSource& source, Device device,
                                             const Model::LoadProgress& progress) {
  return library::translate_errors([&] {
    require_device(device);
    library::apply_cpu_threads();
    return make_impl(gpt2::load_model(source, device, progress));
  });
}

// LoadOptions' names, checked as the CLI's --weights / --kv-type are.
void apply_options(const LoadOptions& options, gpt2::ModelSource& source) {
  if (!options.weights.empty()) {
    source.weights = weight_type_from_name(options.weights);
    if (!source.weights)
      throw Error(ErrorCode::kInvalidArgument,
                  "LoadOptions.weights: expected f32, bf16, f16 or int8 (or empty), got '" + options.weights + "'");
  }
  const auto kv = dtype_from_cli_name(options.kv_type);
  if (!kv)
    throw Error(ErrorCode::kInvalidArgument, "LoadOptions.kv_type: expected f32, bf16 or f16, got '" + options.kv_type + "'");
  source.kv_type = *kv;
  const auto math = gemm_math_from_name(options.gemm_math);
  if (!math)
    throw Error(ErrorCode::kInvalidArgument,
                "LoadOptions.gemm_math: expected fp32, tf32 or bf16, got '" + options.gemm_math + "'");
  source.gemm_math = *math;
}

void check_sequence(const char* fn, const std::vector<int32_t>& ids, size_t index, int64_t context) {
  if (ids.empty())
    throw Error(ErrorCode::kInvalidArgument, std::string(fn) + ": sequence " + std::to_string(index) + " is empty");
  if (int64_t(ids.size()) > context)
    throw Error(ErrorCode::kInvalidArgument,
                std::string(fn) + ": sequence " + std::to_string(index) + " has " + std::to_string(ids.size()) +
                    " tokens, more than the model's context length " + std::to_string(context));
}

}  // namespace

Model::Model(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

Model Model::load(const std::string& directory, Device device) { return load(directory, device, LoadOptions{}); }

Model Model::load(const std::string& directory, Device device, const LoadOptions& options) {
  gpt2::ModelSource source;
  source.directory = directory;
  library::translate_errors([&] { apply_options(options, source); });
  return Model(load_impl(source, device, options.progress));
}

Model Model::load(const std::string& directory, Device device, const LoadProgress& progress) {
  LoadOptions options;
  options.progress = progress;
  return load(directory, device, options);
}

Model Model::initialize(const std::string& preset_or_config, uint64_t seed, Device device) {
  return initialize(preset_or_config, seed, device, LoadOptions{});
}

Model Model::initialize(const std::string& preset_or_config, uint64_t seed, Device device,
                        const LoadOptions& options) {
  gpt2::ModelSource source;
  source.preset_or_config = preset_or_config;
  source.seed = seed;
  library::translate_errors([&] { apply_options(options, source); });
  return Model(load_impl(source, device, options.progress));
}

Model Model::initialize(const std::string& preset_or_config, uint64_t seed, Device device,
                        const LoadProgress& progress) {
  LoadOptions options;
  options.progress = progress;
  return initialize(preset_or_config, seed, device, options);
}

Model Model::initialize(const ModelConfig& config, uint64_t seed, Device device) {
  return initialize(config, seed, device, LoadOptions{});
}

Model Model::initialize(const ModelConfig& config, uint64_t seed, Device device, const LoadOptions& options) {
  gpt2::ModelSource source;
  source.config = library::translate_errors([&] { return library::engine_config(config); });
  source.seed = seed;
  library::translate_errors([&] { apply_options(options, source); });
  return Model(load_impl(source, device, options.progress));
}

Model Model::from_parameters(const ModelConfig& config, const std::vector<TensorView>& tensors,
                             std::shared_ptr<const void> keep_alive, Device device) {
  return Model(library::translate_errors([&] {
    require_device(device);
    library::apply_cpu_threads();
    const gpt2::Config c = library::engine_config(config);
    return make_impl(gpt2::model_from_parameters(c, library::parameters_from_views(c, tensors, keep_alive), device,
                                                 "parameters given to from_parameters"));
  }));
}

ModelInfo Model::info() const {
  return library::translate_errors([&] {
    const gpt2::Config& c = impl_->model->config();
    ModelInfo info;
    info.n_layer = size_t(c.n_layer);
    info.n_embd = size_t(c.n_embd);
    info.n_head = size_t(c.n_head);
    info.context_length = size_t(c.n_positions);
    info.vocab_size = size_t(c.vocab_size);
    info.eos_token_id = int32_t(c.eos_token_id);
    info.parameter_count = size_t(impl_->model->parameter_count());
    info.device = impl_->model->device();
    info.source = impl_->source;
    info.weights = weight_type_name(impl_->model->weight_type());
    const DType kv = impl_->model->kv_type();
    info.kv_type = kv == DType::kBF16 ? "bf16" : kv == DType::kF16 ? "f16" : "f32";
    info.gemm_math = gemm_math_name(impl_->model->gemm_math());
    return info;
  });
}

std::vector<int32_t> Model::tokenize(std::string_view text, bool parse_special) const {
  return library::translate_errors([&] {
    impl_->require_text();
    EncodeOptions options;
    options.parse_special = parse_special;
    return impl_->tokenizer.encode(text, options);
  });
}

std::string Model::detokenize(const std::vector<int32_t>& ids) const {
  return library::translate_errors([&] { return impl_->tokenizer.decode(ids); });
}

std::vector<float> Model::logits(const std::vector<int32_t>& ids) const { return std::move(logits_batch({ids})[0]); }

std::vector<std::vector<float>> Model::logits_batch(const std::vector<std::vector<int32_t>>& batch) const {
  return library::translate_errors([&] {
    const gpt2::Config& c = impl_->model->config();
    const size_t vocab = size_t(c.vocab_size);
    std::vector<std::vector<float>> out(batch.size());
    if (batch.empty()) return out;
    int64_t total = 0, longest = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
      check_sequence("logits", batch[i], i, c.n_positions);
      total += int64_t(batch[i].size());
      longest = std::max(longest, int64_t(batch[i].size()));
    }
    if (batch.size() > size_t(std::numeric_limits<int32_t>::max()))
      throw Error(ErrorCode::kInvalidArgument, "logits: too many sequences in one batch");
    library::apply_cpu_threads();

    gpt2::ForwardLimits limits;
    limits.max_slots = int64_t(batch.size());
    limits.max_len = longest;
    limits.max_step_rows = std::min<int64_t>(total, kDefaultStepRows);  // longer inputs go through in chunks
    limits.all_logits = true;
    gpt2::ForwardPass forward(impl_->model, limits);
    for (size_t i = 0; i < batch.size(); ++i) out[i].resize(batch[i].size() * vocab);

    StepPacker packer(limits.max_step_rows);
    for (size_t i = 0; i < batch.size(); ++i) packer.add(int32_t(i), batch[i].data(), int32_t(batch[i].size()));
    std::vector<size_t> done(batch.size(), 0);
    const size_t row_bytes = vocab * sizeof(float);
    while (!packer.done()) {
      const std::vector<SequenceStep>& step = packer.next();
      const Tensor logits = forward.step(step, gpt2::LogitsFor::kAllTokens);  // [rows, vocab], step order
      const char* src = static_cast<const char*>(logits.raw());
      for (size_t k = 0; k < step.size(); ++k) {
        const size_t i = packer.sequences()[k], n = size_t(step[k].n_tokens);
        device_copy(out[i].data() + done[i] * vocab, Device::kCpu, src, logits.device(), n * row_bytes);
        src += n * row_bytes;
        done[i] += n;
      }
    }
    return out;
  });
}

std::vector<float> Model::score(const std::vector<int32_t>& ids) const { return std::move(score_batch({ids})[0]); }

std::vector<std::vector<float>> Model::score_batch(const std::vector<std::vector<int32_t>>& batch) const {
  return library::translate_errors([&] {
    const gpt2::Config& c = impl_->model->config();
    std::vector<ScoreRequest> requests;
    int64_t fed = 0, longest = 1;
    for (size_t i = 0; i < batch.size(); ++i) {
      check_sequence("score", batch[i], i, c.n_positions);
      requests.push_back({batch[i].data(), int32_t(batch[i].size()), 1});
      fed += int64_t(batch[i].size()) - 1;
      longest = std::max(longest, int64_t(batch[i].size()));
    }
    try {
      check_score_requests(requests, c.vocab_size, c.n_positions);
    } catch (const Error& e) {
      throw Error(e.code(), std::string("score: ") + e.what());
    }
    if (fed == 0) return std::vector<std::vector<float>>(batch.size());  // only one-token sequences: nothing to run
    library::apply_cpu_threads();

    gpt2::ForwardLimits limits;
    limits.max_step_rows = std::min<int64_t>(fed, kDefaultStepRows);  // longer inputs go through in chunks
    limits.max_slots = scoring_slots(requests, limits.max_step_rows);
    limits.max_len = longest - 1;  // the last token of a sequence is only a target
    limits.target_logprobs = true;
    gpt2::Gpt2StepModel model(impl_->model, limits);
    return score_sequences(model, requests);
  });
}

}  // namespace eagerlm
