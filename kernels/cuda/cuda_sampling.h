// Sampling on the GPU (kernels/cuda/sample.cu): one token per row of a logits matrix, with the
// filters of engine/generation/sampling.h in Hugging Face's order (repetition penalty,
// temperature, top-k, top-p, min-p; greedy = argmax, lowest id among ties), drawn with Philox
// (kernels/common/sampling_philox.h) so that only the chosen ids, not the logits, go back to the host.
// The repetition penalty reads a per-slot presence table on the device, updated in the same
// launch from the tokens each sequence is fed. Plain C++ types only; pointers are device
// pointers.
#pragma once

#include <cstdint>

#include "kernels/common/sampling_types.h"

namespace eagerlm::cuda {

struct CudaContext;

using ::eagerlm::SampleParams;
using ::eagerlm::SampleResult;
using ::eagerlm::SampleRow;

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
// kernels/common/sampling_philox.h draws exactly cuRAND's stream.
void curand_philox_words(CudaContext& ctx, uint64_t seed, uint64_t subsequence, uint64_t offset, int64_t count,
                         uint32_t* out);

}  // namespace eagerlm::cuda
