// GPT-2 as the generation loop's StepModel: a ForwardPass whose last-token logits are handed
// back on the host (copied from the device when the model runs elsewhere). Where the backend
// samples on its device, step_and_sample does that (engine/generation/device_sampler.h), so that
// only the chosen ids cross to the host.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "engine/generation/device_sampler.h"
#include "engine/generation/step_model.h"
#include "models/gpt2/forward.h"

namespace eagerlm::gpt2 {

class Gpt2StepModel : public StepModel {
 public:
  Gpt2StepModel(std::shared_ptr<const Model> model, const ForwardLimits& limits);
  Gpt2StepModel(const Gpt2StepModel&) = delete;  // the sampler refers to the forward pass's context
  Gpt2StepModel& operator=(const Gpt2StepModel&) = delete;

  int64_t vocab_size() const override { return forward_.model().config().vocab_size; }
  int64_t max_slots() const override { return forward_.limits().max_slots; }
  int64_t max_len() const override { return forward_.limits().max_len; }
  int64_t max_step_rows() const override { return forward_.limits().max_step_rows; }
  int64_t prefill_chunk() const override { return forward_.context().prefill_chunk(); }
  const float* step(const std::vector<SequenceStep>& sequences) override;
  void copy_prefix(int32_t src, int32_t dst, int32_t n_positions) override;

  // True where the backend samples on its device. Throws as DeviceSampler::check says.
  bool samples_on_device() const override { return sampler_.has_value(); }
  const SampledToken* step_and_sample(const std::vector<SequenceStep>& sequences,
                                      const std::vector<SampleRequest>& requests) override;
  const float* host_logits() override;
  int64_t device_history(int32_t slot) const override { return sampler_ ? sampler_->history(slot) : -1; }

  // With limits.target_logprobs (ForwardPass::step_logprobs, copied to the host).
  bool scores_targets() const override { return forward_.limits().target_logprobs; }
  const float* step_logprobs(const std::vector<SequenceStep>& sequences, const std::vector<int32_t>& targets) override;

  ForwardPass& forward() { return forward_; }

 private:
  ForwardPass forward_;
  std::vector<float> host_logits_;
  std::vector<float> host_logprobs_;
  std::optional<DeviceSampler> sampler_;
  Tensor last_logits_;  // of the last step_and_sample, for host_logits()
};

}  // namespace eagerlm::gpt2
