#include "engine/generation/device_sampler.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/core/error.h"
#include "engine/ops/ops.h"

namespace eagerlm {

DeviceSampler::DeviceSampler(const ExecContext& ctx, int64_t max_slots, int64_t vocab, int64_t max_step_rows)
    : ctx_(ctx), max_slots_(max_slots), vocab_(vocab) {
  const Device device = ctx.device();
  const size_t slots = size_t(max_slots),
               input_bytes = slots * sizeof(SampleRow) + size_t(max_step_rows) * sizeof(int32_t);
  presence_ = Storage::allocate(slots * size_t(vocab), device);
  device_memset_zero(device, presence_->data(), presence_->bytes());
  inputs_ = Storage::allocate(input_bytes, device);
  outputs_ = Storage::allocate(slots * sizeof(SampleResult), device);
  staging_ = ctx.create_staging(input_bytes);
  results_.resize(slots);
  sampled_.resize(slots);
  recorded_.assign(slots, -1);
}

void DeviceSampler::forget(const std::vector<SequenceStep>& sequences) {
  for (const SequenceStep& s : sequences)
    if (s.slot >= 0 && size_t(s.slot) < recorded_.size()) recorded_[size_t(s.slot)] = -1;
}

void DeviceSampler::copy_history(int32_t src, int32_t dst, int32_t n_positions) {
  if (src < 0 || dst < 0 || size_t(src) >= recorded_.size() || size_t(dst) >= recorded_.size() || src == dst) return;
  if (recorded_[size_t(src)] != n_positions) {
    recorded_[size_t(dst)] = -1;
    return;
  }
  uint8_t* presence = static_cast<uint8_t*>(presence_->data());
  device_copy(presence + size_t(dst) * size_t(vocab_), ctx_.device(), presence + size_t(src) * size_t(vocab_),
              ctx_.device(), size_t(vocab_));
  recorded_[size_t(dst)] = n_positions;
}

int64_t DeviceSampler::history(int32_t slot) const {
  return slot >= 0 && size_t(slot) < recorded_.size() ? recorded_[size_t(slot)] : -1;
}

namespace {

// Whether two requests can share one sample_rows call (the kernel takes one option set).
bool same_kernel_options(const SampleRequest& a, const SampleRequest& b) {
  const SamplingOptions &x = *a.options, &y = *b.options;
  return a.logprobs == b.logprobs && x.temperature == y.temperature && x.top_k == y.top_k && x.top_p == y.top_p &&
         x.min_p == y.min_p && x.repetition_penalty == y.repetition_penalty && x.seed == y.seed &&
         x.vocab_limit == y.vocab_limit;
}

}  // namespace

void DeviceSampler::check(const std::vector<SequenceStep>& sequences,
                          const std::vector<SampleRequest>& requests) const {
  if (requests.size() != sequences.size())
    throw_error(ErrorCode::kInvalidArgument, "step_and_sample: " + std::to_string(requests.size()) + " requests for " +
                                                 std::to_string(sequences.size()) + " sequences");
  for (size_t i = 0; i < requests.size(); ++i) {
    const SamplingOptions* o = requests[i].options;
    if (!o) continue;
    o->validate();
    if (o->host_processors())
      throw_error(ErrorCode::kInvalidArgument,
                  "step_and_sample: presence/frequency penalties, logit_bias and no_repeat_ngram_size are applied "
                  "on the host only");
    // (Slots out of range are left to the forward pass, which refuses them.)
    const SequenceStep& s = sequences[i];
    if (o->repetition_penalty != 1.0f && s.past_len != 0 && s.slot >= 0 && size_t(s.slot) < recorded_.size() &&
        recorded_[size_t(s.slot)] != s.past_len)
      throw_error(ErrorCode::kInvalidArgument,
                  "step_and_sample: slot " + std::to_string(s.slot) + " continues at position " +
                      std::to_string(s.past_len) + " but only " + std::to_string(recorded_[size_t(s.slot)]) +
                      " of its tokens went through step_and_sample; the repetition penalty needs them all "
                      "(start the sequence, past_len 0, with step_and_sample)");
  }
}

const SampledToken* DeviceSampler::sample(const Tensor& logits, const std::vector<SequenceStep>& sequences,
                                          const std::vector<SampleRequest>& requests) {
  const size_t n = sequences.size();
  EAGERLM_ASSERT(logits.rank() == 2 && logits.size(0) == int64_t(n) && logits.size(1) == vocab_);
  // Groups of requests with the same kernel options, each group's first request standing for it;
  // with none (nothing sampled on the device), one call still records the fed tokens.
  std::vector<size_t> leaders;
  for (size_t i = 0; i < n; ++i) {
    if (!requests[i].options || !requests[i].wanted) continue;
    bool found = false;
    for (size_t l : leaders) found = found || same_kernel_options(requests[l], requests[i]);
    if (!found) leaders.push_back(i);
  }
  const SamplingOptions defaults;
  for (size_t i = 0; i < n; ++i) sampled_[i] = {-1, 0.0f};
  const size_t calls = std::max<size_t>(leaders.size(), 1);
  for (size_t call = 0; call < calls; ++call) {
    const SampleRequest* leader = leaders.empty() ? nullptr : &requests[leaders[call]];
    const SamplingOptions& options = leader ? *leader->options : defaults;
    // Inputs: one SampleRow per sequence, then every fed token, in one staged copy queued after
    // the step (a synchronous copy would first wait for the step to finish). Recording the fed
    // tokens again in a later call of the same step changes nothing (the presence rows are sets).
    const size_t rows_bytes = n * sizeof(SampleRow);
    unsigned char* const host = static_cast<unsigned char*>(staging_->writable());
    size_t tokens = 0;
    for (size_t i = 0; i < n; ++i) {
      const SequenceStep& s = sequences[i];
      SampleRow row;
      row.stream = requests[i].stream;
      row.draw = requests[i].draw;
      row.slot = s.slot;
      row.restart = s.past_len == 0 ? 1 : 0;
      row.token_begin = int32_t(tokens);
      row.n_tokens = s.n_tokens;
      row.wanted = leader && requests[i].wanted && requests[i].options && same_kernel_options(*leader, requests[i]);
      std::memcpy(host + i * sizeof row, &row, sizeof row);
      std::memcpy(host + rows_bytes + tokens * sizeof(int32_t), s.tokens, size_t(s.n_tokens) * sizeof(int32_t));
      tokens += size_t(s.n_tokens);
    }
    char* inputs = static_cast<char*>(inputs_->data());
    staging_->upload(inputs, rows_bytes + tokens * sizeof(int32_t));

    const SampleParams params = sample_params(options, leader && leader->logprobs);
    auto* results = static_cast<SampleResult*>(outputs_->data());
    // A padded vocabulary's padding ids are never sampled: the kernel sees the real ids' columns.
    const int64_t allowed = options.vocab_limit > 0 ? std::min(vocab_, options.vocab_limit) : vocab_;
    ops::sample_rows(ctx_, logits.slice(1, 0, allowed), reinterpret_cast<const SampleRow*>(inputs),
                     reinterpret_cast<const int32_t*>(inputs + rows_bytes), static_cast<uint8_t*>(presence_->data()),
                     max_slots_, params, results);
    device_copy(results_.data(), Device::kCpu, results, ctx_.device(), n * sizeof(SampleResult));
    for (size_t i = 0; i < n; ++i) {
      if (!leader || !requests[i].wanted || !requests[i].options || !same_kernel_options(*leader, requests[i])) continue;
      const int32_t id = results_[i].id;
      if (id < 0 || id >= allowed)
        throw_error(ErrorCode::kInternal, "device sampling returned token id " + std::to_string(id));
      sampled_[i] = {id, results_[i].logprob};
    }
  }
  for (const SequenceStep& s : sequences) {
    int64_t& recorded = recorded_[size_t(s.slot)];
    recorded = s.past_len == 0 ? s.n_tokens : (recorded == s.past_len ? recorded + s.n_tokens : -1);
  }
  return sampled_.data();
}

}  // namespace eagerlm
