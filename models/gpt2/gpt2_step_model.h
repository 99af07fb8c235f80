// GPT-2 as the generation loop's StepModel: a ForwardPass whose last-token logits are handed
// back on the host (copied from the device when the model runs on CUDA). On CUDA it also samples
// on the device (step_and_sample, kernels/cuda/cuda_sampling.h), so that only the chosen ids
// cross to the host; its buffers (per-slot presence of seen tokens for the repetition penalty,
// the step's inputs and outputs) are allocated once, here, never per token.
#pragma once

#include <memory>
#include <vector>

#include "engine/generation/step_model.h"
#include "kernels/cuda/cuda_graph.h"  // StagingBuffer
#include "kernels/cuda/cuda_sampling.h"
#include "models/gpt2/forward.h"

namespace eagerlm::gpt2 {

class Gpt2StepModel : public StepModel {
 public:
  Gpt2StepModel(std::shared_ptr<const Model> model, const ForwardLimits& limits);

  int64_t vocab_size() const override { return forward_.model().config().vocab_size; }
  int64_t max_slots() const override { return forward_.limits().max_slots; }
  int64_t max_len() const override { return forward_.limits().max_len; }
  int64_t max_step_rows() const override { return forward_.limits().max_step_rows; }
  const float* step(const std::vector<SequenceStep>& sequences) override;

  // True on CUDA. Throws kInvalidArgument when a request does not match its sequence, or when
  // the repetition penalty is on and a sequence continues a slot whose tokens were not all fed
  // through step_and_sample (its history on the device would be incomplete).
  bool samples_on_device() const override { return presence_ != nullptr; }
  const SampledToken* step_and_sample(const std::vector<SequenceStep>& sequences,
                                      const std::vector<SampleRequest>& requests,
                                      const SamplingOptions& options, bool logprobs) override;

  ForwardPass& forward() { return forward_; }

 private:
  ForwardPass forward_;
  std::vector<float> host_logits_;

  // Device sampling (CUDA only; null on the CPU).
  std::shared_ptr<Storage> presence_;  // [max_slots, vocab] bytes: tokens seen per slot
  std::shared_ptr<Storage> inputs_;    // cuda::SampleRow per sequence, then the fed tokens
  std::shared_ptr<Storage> outputs_;   // cuda::SampleResult per sequence
  cuda::StagingBuffer staging_;         // pinned host image of inputs_ (async upload)
  std::vector<cuda::SampleResult> results_;
  std::vector<SampledToken> sampled_;
  std::vector<int64_t> recorded_;  // per slot: tokens its presence row holds (-1: not known)
};

}  // namespace eagerlm::gpt2
