// Small types and settings the rest of eagerlm's C++ API shares (and the engine uses too):
// devices, CPU threads, why a generation finished, the padded attention's dimensions, and the
// library's version.
#pragma once

#include <cstdint>

#include "export.h"

namespace eagerlm {

// Where a model's weights live and its forward pass runs.
enum class Device : unsigned char { kCpu, kCuda };

EAGERLM_API const char* device_name(Device device);  // "cpu" or "cuda"
// True when this build has the CUDA backend and a CUDA device is present.
EAGERLM_API bool cuda_available();

// Why one sequence stopped generating.
enum class FinishReason {
  kEos,       // the model produced its end-of-text token
  kStop,      // a stop string appeared (the text is cut before it)
  kLength,    // max_new_tokens reached, or the generator's max_length
  kCallback,  // the per-token callback returned false
  kCancelled,  // the request was cancelled (Engine, or an interrupted generation)
};
// "eos", "stop", "length", "callback", "cancelled"
EAGERLM_API const char* finish_reason_name(FinishReason reason);

// The dimensions of a padded attention call over a caller's cache (attention.hpp).
struct PaddedAttentionShape {
  int64_t batch = 0;       // sequences, one cache slot each
  int64_t new_tokens = 0;  // query rows per sequence
  int64_t heads = 0;
  int64_t max_len = 0;  // cache positions per sequence
  int64_t head_dim = 0;
};

// A token with its log-probability (an alternative at one position, with top_logprobs).
struct TokenLogprob {
  int32_t id = -1;
  float logprob = 0.0f;
};

// CPU threads that each later generate() or logits() call uses, from any thread (OpenMP; OpenBLAS
// stays single-threaded). n = 0 restores the default: OMP_NUM_THREADS, else every core available
// to the process. Throws Error(kInvalidArgument) for n < 0.
EAGERLM_API void set_cpu_threads(int n);
EAGERLM_API int cpu_threads();  // the current setting (0: the default)

// The library's version, "MAJOR.MINOR.PATCH" (compare with EAGERLM_VERSION_STRING in version.h
// to see whether the headers and the loaded library agree).
EAGERLM_API const char* version();

}  // namespace eagerlm
