// kv_append: copies one step's new keys and values out of the fused qkv projection into their
// cache cells. Nothing already in the cache moves; only [slot][head][past_len + r][:] is written.
#include <algorithm>

#include "kernels/cpu/cpu_ops.h"

namespace eagerlm::cpu {

namespace {
// Copied floats below which one thread does it (an OpenMP region costs ~0.3 µs even inactive).
constexpr int64_t kParallelElements = 65536;
}  // namespace

void kv_append(const float* qkv, const StepBatch& batch, const KvLayout& layout, float* k_cache,
               float* v_cache) {
  const int64_t d_head = layout.d_head;
  const int64_t width = layout.n_head * d_head;  // columns of each of q, k and v
  const int64_t row_len = 3 * width;
  for (int32_t s = 0; s < batch.n_seq; ++s) {
    const int64_t n_new = batch.n_new[s];
    const int64_t first_row = batch.row_start[s];
    const int64_t past = batch.past_len[s];
    float* k_slot = k_cache + static_cast<int64_t>(batch.slot[s]) * layout.slot_stride;
    float* v_slot = v_cache + static_cast<int64_t>(batch.slot[s]) * layout.slot_stride;
    auto append_row = [&](int64_t r) {
      const float* row = qkv + (first_row + r) * row_len;
      const int64_t cell = (past + r) * layout.pos_stride;
      for (int64_t h = 0; h < layout.n_head; ++h) {
        const float* k_src = row + width + h * d_head;
        const float* v_src = row + 2 * width + h * d_head;
        std::copy(k_src, k_src + d_head, k_slot + h * layout.head_stride + cell);
        std::copy(v_src, v_src + d_head, v_slot + h * layout.head_stride + cell);
      }
    };
    if (n_new * 2 * width <= kParallelElements) {
      for (int64_t r = 0; r < n_new; ++r) append_row(r);
    } else {
#pragma omp parallel for schedule(static)
      for (int64_t r = 0; r < n_new; ++r) append_row(r);
    }
  }
}

}  // namespace eagerlm::cpu
