#include "models/gpt2/gpt2_step_model.h"

#include <cstring>
#include <string>

#include "engine/core/device.h"
#include "engine/core/error.h"

namespace eagerlm::gpt2 {

Gpt2StepModel::Gpt2StepModel(std::shared_ptr<const Model> model, const ForwardLimits& limits)
    : forward_(std::move(model), limits) {
  if (forward_.context().device() != Device::kCuda) return;
  const size_t slots = size_t(max_slots()), vocab = size_t(vocab_size());
  const size_t input_bytes = slots * sizeof(cuda::SampleRow) + size_t(max_step_rows()) * sizeof(int32_t);
  presence_ = Storage::allocate(slots * vocab, Device::kCuda);
  device_memset_zero(Device::kCuda, presence_->data(), presence_->bytes());
  inputs_ = Storage::allocate(input_bytes, Device::kCuda);
  outputs_ = Storage::allocate(slots * sizeof(cuda::SampleResult), Device::kCuda);
  staging_ = cuda::StagingBuffer(input_bytes);
  results_.resize(slots);
  sampled_.resize(slots);
  recorded_.assign(slots, -1);
}

const float* Gpt2StepModel::step(const std::vector<SequenceStep>& sequences) {
  Tensor logits = forward_.step(sequences, LogitsFor::kLastToken);
  // Tokens fed this way never reach the presence rows: those slots' histories are now unknown.
  for (const SequenceStep& s : sequences)
    if (s.slot >= 0 && size_t(s.slot) < recorded_.size()) recorded_[size_t(s.slot)] = -1;
  if (logits.device() == Device::kCpu) return logits.f32();
  host_logits_.resize(size_t(logits.numel()));
  device_copy(host_logits_.data(), Device::kCpu, logits.raw(), logits.device(), logits.nbytes());
  return host_logits_.data();
}

const SampledToken* Gpt2StepModel::step_and_sample(const std::vector<SequenceStep>& sequences,
                                                   const std::vector<SampleRequest>& requests,
                                                   const SamplingOptions& options, bool logprobs) {
  if (!samples_on_device())
    throw_error(ErrorCode::kUnsupported,
                "Gpt2StepModel::step_and_sample: the model runs on the CPU, where tokens are sampled on the host");
  if (requests.size() != sequences.size())
    throw_error(ErrorCode::kInvalidArgument, "step_and_sample: " + std::to_string(requests.size()) +
                                                 " requests for " + std::to_string(sequences.size()) + " sequences");
  options.validate();
  // Checked before the step runs, so that a refused call changes nothing. (Slots out of range
  // are left to the forward pass, which refuses them.)
  if (options.repetition_penalty != 1.0f)
    for (const SequenceStep& s : sequences)
      if (s.past_len != 0 && s.slot >= 0 && size_t(s.slot) < recorded_.size() &&
          recorded_[size_t(s.slot)] != s.past_len)
        throw_error(ErrorCode::kInvalidArgument,
                    "step_and_sample: slot " + std::to_string(s.slot) + " continues at position " +
                        std::to_string(s.past_len) + " but only " + std::to_string(recorded_[size_t(s.slot)]) +
                        " of its tokens went through step_and_sample; the repetition penalty needs them all "
                        "(start the sequence, past_len 0, with step_and_sample)");

  const Tensor logits = forward_.step(sequences, LogitsFor::kLastToken);

  // Inputs: one SampleRow per sequence, then every fed token, in one asynchronous copy on the
  // step's stream (a synchronous copy from pageable memory would first wait for the step).
  const size_t n = sequences.size();
  const size_t rows_bytes = n * sizeof(cuda::SampleRow);
  unsigned char* const host = static_cast<unsigned char*>(staging_.writable());
  size_t tokens = 0;
  for (size_t i = 0; i < n; ++i) {
    const SequenceStep& s = sequences[i];
    cuda::SampleRow row;
    row.stream = requests[i].stream;
    row.draw = requests[i].draw;
    row.slot = s.slot;
    row.restart = s.past_len == 0 ? 1 : 0;
    row.token_begin = int32_t(tokens);
    row.n_tokens = s.n_tokens;
    row.wanted = requests[i].wanted ? 1 : 0;
    std::memcpy(host + i * sizeof row, &row, sizeof row);
    std::memcpy(host + rows_bytes + tokens * sizeof(int32_t), s.tokens, size_t(s.n_tokens) * sizeof(int32_t));
    tokens += size_t(s.n_tokens);
  }
  char* inputs = static_cast<char*>(inputs_->data());
  cuda::CudaContext& gpu = *forward_.context().cuda();
  staging_.upload(gpu, inputs, rows_bytes + tokens * sizeof(int32_t));

  cuda::SampleParams params;
  params.temperature = options.temperature;
  params.top_k = options.top_k;
  params.top_p = options.top_p;
  params.min_p = options.min_p;
  params.repetition_penalty = options.repetition_penalty;
  params.seed = options.seed;
  params.logprobs = logprobs;
  const int64_t vocab = vocab_size();
  auto* results = static_cast<cuda::SampleResult*>(outputs_->data());
  EAGERLM_ASSERT(logits.rank() == 2 && logits.size(0) == int64_t(n) && logits.size(1) == vocab);
  cuda::sample_rows(gpu, static_cast<const float*>(logits.raw()), logits.stride(0),
                    int64_t(n), vocab,
                    reinterpret_cast<const cuda::SampleRow*>(inputs),
                    reinterpret_cast<const int32_t*>(inputs + rows_bytes), static_cast<uint8_t*>(presence_->data()),
                    max_slots(), params, results, nullptr);
  device_copy(results_.data(), Device::kCpu, results, Device::kCuda, n * sizeof(cuda::SampleResult));

  for (size_t i = 0; i < n; ++i) {
    const SequenceStep& s = sequences[i];
    int64_t& recorded = recorded_[size_t(s.slot)];
    recorded = s.past_len == 0 ? s.n_tokens : (recorded == s.past_len ? recorded + s.n_tokens : -1);
    const int32_t id = results_[i].id;
    if (requests[i].wanted && (id < 0 || id >= vocab))
      throw_error(ErrorCode::kInternal, "device sampling returned token id " + std::to_string(id));
    sampled_[i] = {requests[i].wanted ? id : -1, results_[i].logprob};
  }
  return sampled_.data();
}

}  // namespace eagerlm::gpt2
