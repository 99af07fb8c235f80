// Sampling on the device where the logits are, for backends that offer it
// (ExecContext::samples_on_device(), today CUDA): the filters of sampling.h run in
// kernels/cuda/sample.cu, so only the chosen ids (and their log-probabilities) cross to the host.
// Its buffers (a per-slot presence table of the tokens seen, for the repetition penalty; the
// step's row records and fed tokens; the results) are allocated once, here, never per token.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/core/backend.h"
#include "engine/core/tensor.h"
#include "engine/generation/step_model.h"
#include "engine/ops/exec_context.h"

namespace eagerlm {

class DeviceSampler {
 public:
  // For a model of `vocab` tokens with max_slots cache slots and steps of max_step_rows tokens.
  DeviceSampler(const ExecContext& ctx, int64_t max_slots, int64_t vocab, int64_t max_step_rows);

  // Throws kInvalidArgument, before any work, when the requests do not match the sequences, an
  // option is out of range, or the repetition penalty is on for a sequence that continues a slot
  // whose tokens did not all go through sample() (its history on the device would be incomplete).
  void check(const std::vector<SequenceStep>& sequences, const std::vector<SampleRequest>& requests) const;
  // Tokens fed to these slots without sample(): their histories are no longer known.
  void forget(const std::vector<SequenceStep>& sequences);
  // Slot dst now holds src's first n_positions tokens (StepModel::copy_prefix): its history too,
  // when src's history is exactly those tokens.
  void copy_history(int32_t src, int32_t dst, int32_t n_positions);
  int64_t history(int32_t slot) const;  // tokens the slot's history holds, -1: unknown
  // One token per wanted sequence whose request has options, from logits [sequences.size(),
  // vocab] on the device (the step just run for `sequences`): one kernel call per distinct set
  // of options. Every sequence's fed tokens are recorded. Entries valid until the next call.
  const SampledToken* sample(const Tensor& logits, const std::vector<SequenceStep>& sequences,
                             const std::vector<SampleRequest>& requests);

 private:
  const ExecContext& ctx_;
  int64_t max_slots_, vocab_;
  std::shared_ptr<Storage> presence_;  // [max_slots, vocab] bytes: tokens seen per slot
  std::shared_ptr<Storage> inputs_;    // SampleRow per sequence, then the fed tokens
  std::shared_ptr<Storage> outputs_;   // SampleResult per sequence
  std::unique_ptr<Staging> staging_;   // host image of inputs_
  std::vector<SampleResult> results_;
  std::vector<SampledToken> sampled_;
  std::vector<int64_t> recorded_;  // per slot: tokens its presence row holds (-1: not known)
};

}  // namespace eagerlm
