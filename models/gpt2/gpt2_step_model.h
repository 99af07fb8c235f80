// GPT-2 as the generation loop's StepModel: a ForwardPass whose last-token logits are handed
// back on the host (copied from the device when the model runs on CUDA).
#pragma once

#include <memory>
#include <vector>

#include "engine/generation/step_model.h"
#include "models/gpt2/forward.h"

namespace eagerlm::gpt2 {

class Gpt2StepModel : public StepModel {
 public:
  Gpt2StepModel(std::shared_ptr<const Model> model, const ForwardLimits& limits)
      : forward_(std::move(model), limits) {}

  int64_t vocab_size() const override { return forward_.model().config().vocab_size; }
  int64_t max_slots() const override { return forward_.limits().max_slots; }
  int64_t max_len() const override { return forward_.limits().max_len; }
  int64_t max_step_rows() const override { return forward_.limits().max_step_rows; }
  const float* step(const std::vector<SequenceStep>& sequences) override;

  ForwardPass& forward() { return forward_; }

 private:
  ForwardPass forward_;
  std::vector<float> host_logits_;
};

}  // namespace eagerlm::gpt2
