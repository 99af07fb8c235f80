// Sampling on the GPU (kernels/cuda/sample.cu): one token per row of a logits matrix, with the
// filters of engine/generation/sampling.h in Hugging Face's order (repetition penalty,
// temperature, top-k, top-p, min-p; greedy = argmax, lowest id among ties), drawn with Philox
// (kernels/sampling_philox.h) so that only the chosen ids, not the logits, go back to the host.
// The repetition penalty reads a per-slot presence table on the device, updated in the same
// launch from the tokens each sequence is fed. Plain C++ types only; pointers are device
// pointers. Stubs that throw live in engine/ops/cuda_sampling_absent.cpp for builds without CUDA.
#pragma once

#include <cstdint>

namespace eagerlm::cuda {

struct CudaContext;

// One row of a sample_rows call (an array of them in device memory, one per logits row).
struct SampleRow {
  uint64_t stream = 0;      // the sequence's random stream (Philox subsequence)
  uint64_t draw = 0;        // its draw number: tokens it sampled before this one
  int32_t slot = 0;         // its presence row (out of [0, n_slots): no penalty, nothing recorded)
  int32_t restart = 0;      // 1: the sequence starts with this step; its presence row is cleared
  int32_t token_begin = 0;  // tokens fed this step: tokens[token_begin, token_begin + n_tokens)
  int32_t n_tokens = 0;
  int32_t wanted = 1;       // 0: record the fed tokens only (a prompt chunk that is not its last)
  int32_t reserved = 0;
};

// The options of the whole call (validated: kInvalidArgument names the bad one).
struct SampleParams {
  float temperature = 0.0f;  // 0: greedy
  int32_t top_k = 0;         // 0 (or >= vocab): off
  float top_p = 1.0f;        // 1: off
  float min_p = 0.0f;        // 0: off
  float repetition_penalty = 1.0f;
  uint64_t seed = 0;
  bool logprobs = false;     // also return log p(id) under the raw logits' softmax
};

struct SampleResult {
  int32_t id = -1;         // -1 for rows not wanted
  float logprob = 0.0f;    // when SampleParams::logprobs
};

// For each row r < n_rows: first records rows[r]'s fed tokens in presence[slot] (cleared first
// when restart), then, when wanted, samples from logits[r·ld, r·ld + vocab) into out[r].
// presence: [n_slots, vocab] bytes (0/1), zeroed by the caller before first use. Slots of the
// rows must be distinct. kept (testing; may be null): [n_rows, vocab] bytes, set to 1 for the
// tokens the filters keep (the argmax alone when greedy) and 0 elsewhere, for wanted rows.
void sample_rows(CudaContext& ctx, const float* logits, int64_t ld, int64_t n_rows, int64_t vocab,
                 const SampleRow* rows, const int32_t* tokens, uint8_t* presence, int64_t n_slots,
                 const SampleParams& params, SampleResult* out, uint8_t* kept = nullptr);

// Testing: `count` consecutive curand() words of cuRAND's own Philox4_32_10 after
// curand_init(seed, subsequence, offset), written to out (device), to check that
// kernels/sampling_philox.h draws exactly cuRAND's stream.
void curand_philox_words(CudaContext& ctx, uint64_t seed, uint64_t subsequence, uint64_t offset,
                         int64_t count, uint32_t* out);

}  // namespace eagerlm::cuda
