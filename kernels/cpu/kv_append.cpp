// kv_append: copies one step's new keys and values out of the fused qkv projection into their
// cache cells. Nothing already in the cache moves; only [slot][head][past_len + r][:] is written.
// A BF16 or F16 cache gets each value rounded to nearest even by this variant's convert_from_f32
// (dtype.h's rounding bit for bit, vectorized), one head's d_head values at a time.
#include <algorithm>

#include "kernels/common/dtype.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/parallel.h"

#include "kernels/cpu/isa_begin.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

namespace {
// Copied floats below which one thread does it (an OpenMP region costs ~0.3 µs even inactive).
constexpr int64_t kParallelElements = 65536;

// Writes n floats into the cache at element `at` of a cache of `dtype`.
void store(const float* src, int64_t n, DType dtype, void* cache, int64_t at) {
  if (dtype == DType::kF32) {
    std::copy(src, src + n, static_cast<float*>(cache) + at);
  } else {
    convert_from_f32(src, dtype, static_cast<char*>(cache) + at * int64_t(dtype_size(dtype)), n);
  }
}
}  // namespace

void kv_append(const float* qkv, const StepBatch& batch, const KvLayout& layout, void* k_cache, void* v_cache) {
  const int64_t d_head = layout.d_head;
  const int64_t width = layout.n_head * d_head;  // columns of each of q, k and v
  const int64_t row_len = 3 * width;
  for (int32_t s = 0; s < batch.n_seq; ++s) {
    const int64_t n_new = batch.n_new[s];
    const int64_t first_row = batch.row_start[s];
    const int64_t past = batch.past_len[s];
    const int64_t slot = static_cast<int64_t>(batch.slot[s]) * layout.slot_stride;
    auto append_row = [&](int64_t r) {
      const float* row = qkv + (first_row + r) * row_len;
      const int64_t cell = slot + (past + r) * layout.pos_stride;
      for (int64_t h = 0; h < layout.n_head; ++h) {
        store(row + width + h * d_head, d_head, layout.dtype, k_cache, cell + h * layout.head_stride);
        store(row + 2 * width + h * d_head, d_head, layout.dtype, v_cache, cell + h * layout.head_stride);
      }
    };
    if (n_new * 2 * width <= kParallelElements) {
      for (int64_t r = 0; r < n_new; ++r) append_row(r);
    } else {
      parallel_ranges(n_new, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) append_row(r);
      });
    }
  }
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
