#include "models/gpt2/gpt2_step_model.h"

namespace eagerlm::gpt2 {

const float* Gpt2StepModel::step(const std::vector<SequenceStep>& sequences) {
  Tensor logits = forward_.step(sequences, LogitsFor::kLastToken);
  if (logits.device() == Device::kCpu) return logits.f32();
  host_logits_.resize(size_t(logits.numel()));
  device_copy(host_logits_.data(), Device::kCpu, logits.raw(), logits.device(), logits.nbytes());
  return host_logits_.data();
}

}  // namespace eagerlm::gpt2
