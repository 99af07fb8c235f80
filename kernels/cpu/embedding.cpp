// embedding: token plus position embedding rows, the input of the first block.
#include "kernels/cpu/cpu_ops.h"

namespace eagerlm::cpu {

namespace {
// Below this many elements one thread does it: an OpenMP region costs ~0.3 µs even when inactive.
constexpr int64_t kParallelElements = 65536;
}  // namespace

void embedding(const int32_t* ids, const int32_t* positions, int64_t n_tokens, const float* wte,
               const float* wpe, int64_t d_model, float* y) {
  if (n_tokens <= 0 || d_model <= 0) return;
  auto row = [&](int64_t t) {
    const float* token = wte + static_cast<int64_t>(ids[t]) * d_model;
    const float* position = wpe + static_cast<int64_t>(positions[t]) * d_model;
    float* out = y + t * d_model;
#pragma omp simd
    for (int64_t c = 0; c < d_model; ++c) out[c] = token[c] + position[c];
  };
  if (n_tokens * d_model <= kParallelElements) {
    for (int64_t t = 0; t < n_tokens; ++t) row(t);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < n_tokens; ++t) row(t);
}

}  // namespace eagerlm::cpu
