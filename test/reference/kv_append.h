// Reference for kv_append: returns copies of the caches with the step's keys and values written
// cell by cell (plain copies, so the comparison is exact).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/common/kv_layout.h"

namespace eagerlm::reference {

inline std::pair<std::vector<float>, std::vector<float>> kv_append(const float* qkv, const StepBatch& batch,
                                                                   const KvLayout& layout, std::vector<float> k_cache,
                                                                   std::vector<float> v_cache) {
  const int64_t width = layout.n_head * layout.d_head;
  for (int32_t s = 0; s < batch.n_seq; ++s) {
    for (int64_t r = 0; r < batch.n_new[s]; ++r) {
      const int64_t row = batch.row_start[s] + r;
      const int64_t pos = batch.past_len[s] + r;
      for (int64_t h = 0; h < layout.n_head; ++h) {
        for (int64_t c = 0; c < layout.d_head; ++c) {
          const int64_t cell =
              batch.slot[s] * layout.slot_stride + h * layout.head_stride + pos * layout.pos_stride + c;
          k_cache[cell] = qkv[row * 3 * width + width + h * layout.d_head + c];
          v_cache[cell] = qkv[row * 3 * width + 2 * width + h * layout.d_head + c];
        }
      }
    }
  }
  return {std::move(k_cache), std::move(v_cache)};
}

}  // namespace eagerlm::reference
