#include "models/gpt2/gpt2_step_model.h"

#include "engine/core/device.h"
#include "engine/core/error.h"

namespace eagerlm::gpt2 {

Gpt2StepModel::Gpt2StepModel(std::shared_ptr<const Model> model, const ForwardLimits& limits)
    : forward_(std::move(model), limits) {
  if (forward_.context().samples_on_device())
    sampler_.emplace(forward_.context(), max_slots(), vocab_size(), max_step_rows());
}

const float* Gpt2StepModel::step(const std::vector<SequenceStep>& sequences) {
  last_logits_ = Tensor();
  Tensor logits = forward_.step(sequences, LogitsFor::kLastToken);
  if (sampler_) sampler_->forget(sequences);
  if (logits.device() == Device::kCpu) return logits.f32();
  host_logits_.resize(size_t(logits.numel()));
  device_copy(host_logits_.data(), Device::kCpu, logits.raw(), logits.device(), logits.nbytes());
  return host_logits_.data();
}

const float* Gpt2StepModel::step_logprobs(const std::vector<SequenceStep>& sequences,
                                          const std::vector<int32_t>& targets) {
  last_logits_ = Tensor();
  const Tensor logprobs = forward_.step_logprobs(sequences, targets);
  if (sampler_) sampler_->forget(sequences);
  if (logprobs.device() == Device::kCpu) return logprobs.f32();
  host_logprobs_.resize(size_t(logprobs.numel()));
  device_copy(host_logprobs_.data(), Device::kCpu, logprobs.raw(), logprobs.device(), logprobs.nbytes());
  return host_logprobs_.data();
}

void Gpt2StepModel::copy_prefix(int32_t src, int32_t dst, int32_t n_positions) {
  forward_.copy_prefix(src, dst, n_positions);
  if (sampler_) sampler_->copy_history(src, dst, n_positions);
}

const SampledToken* Gpt2StepModel::step_and_sample(const std::vector<SequenceStep>& sequences,
                                                   const std::vector<SampleRequest>& requests) {
  if (!sampler_)
    throw_error(ErrorCode::kUnsupported, std::string("Gpt2StepModel::step_and_sample: the model runs on the ") +
                                             device_name(forward_.context().device()) +
                                             ", where tokens are sampled on the host");
  sampler_->check(sequences, requests);  // before the step, so a refused call changes nothing
  last_logits_ = forward_.step(sequences, LogitsFor::kLastToken);
  return sampler_->sample(last_logits_, sequences, requests);
}

const float* Gpt2StepModel::host_logits() {
  if (!last_logits_.defined()) throw_error(ErrorCode::kInvalidArgument, "host_logits: no step_and_sample ran yet");
  host_logits_.resize(size_t(last_logits_.numel()));
  device_copy(host_logits_.data(), Device::kCpu, last_logits_.raw(), last_logits_.device(), last_logits_.nbytes());
  return host_logits_.data();
}

}  // namespace eagerlm::gpt2
