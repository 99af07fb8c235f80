// embedding: token plus position embedding rows, the input of the first block. A typed wte
// (bf16, f16, int8) is widened row by row as gather_rows_typed widens it (widen.h), then the
// position row is added: the float32 path's arithmetic on the widened values.
#include "kernels/common/dtype.h"
#include "kernels/common/weights.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/parallel.h"

#include "kernels/cpu/isa_begin.h"

#include "kernels/cpu/widen.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

namespace {
// Below this many elements one thread does it: an OpenMP region costs ~0.3 µs even when inactive.
constexpr int64_t kParallelElements = 65536;
}  // namespace

void embedding(const int32_t* ids, const int32_t* positions, int64_t n_tokens, const Weights& wte, const float* wpe,
               int64_t d_model, float* y) {
  if (n_tokens <= 0 || d_model <= 0) return;
  auto row = [&](int64_t t) {
    float* out = y + t * d_model;
    const float* token = static_cast<const float*>(wte.data) + static_cast<int64_t>(ids[t]) * d_model;
    if (wte.type != WeightType::kF32) {
      widen_rows(wte, d_model, 0, ids + t, 1, out);  // the token row, widened in place
      token = out;
    }
    const float* position = wpe + static_cast<int64_t>(positions[t]) * d_model;
#pragma omp simd
    for (int64_t c = 0; c < d_model; ++c) out[c] = token[c] + position[c];
  };
  if (n_tokens * d_model <= kParallelElements) {
    for (int64_t t = 0; t < n_tokens; ++t) row(t);
    return;
  }
  parallel_ranges(n_tokens, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) row(t);
  });
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
