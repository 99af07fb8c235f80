// Double-precision reference for causal attention over the KV cache: for sequence s, head h and
// new token i, softmax(scale · q·kⱼ) over positions j ∈ [0, past_len[s] + i], then the weighted
// sum of vⱼ. Plain two-pass softmax, no blocking. Result is dense [n_rows, n_head·d_head].
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/common/kv_layout.h"

namespace eagerlm::reference {

inline std::vector<double> attention(const float* qkv, int64_t ld_qkv, const StepBatch& batch, const KvLayout& layout,
                                     const float* k_cache, const float* v_cache, double scale) {
  const int64_t d = layout.d_head;
  const int64_t width = layout.n_head * d;
  std::vector<double> out(static_cast<size_t>(batch.n_rows * width), 0.0);
  for (int32_t s = 0; s < batch.n_seq; ++s) {
    for (int64_t h = 0; h < layout.n_head; ++h) {
      const int64_t base = batch.slot[s] * layout.slot_stride + h * layout.head_stride;
      for (int64_t i = 0; i < batch.n_new[s]; ++i) {
        const int64_t row = batch.row_start[s] + i;
        const float* q = qkv + row * ld_qkv + h * d;
        const int64_t n_keys = batch.past_len[s] + i + 1;
        std::vector<double> scores(static_cast<size_t>(n_keys));
        for (int64_t j = 0; j < n_keys; ++j) {
          double dot = 0.0;
          for (int64_t c = 0; c < d; ++c) {
            dot += double(q[c]) * double(k_cache[base + j * layout.pos_stride + c]);
          }
          scores[j] = scale * dot;
        }
        const double max = *std::max_element(scores.begin(), scores.end());
        double sum = 0.0;
        for (double& x : scores) {
          x = std::exp(x - max);
          sum += x;
        }
        for (int64_t j = 0; j < n_keys; ++j) {
          for (int64_t c = 0; c < d; ++c) {
            out[row * width + h * d + c] += scores[j] / sum * double(v_cache[base + j * layout.pos_stride + c]);
          }
        }
      }
    }
  }
  return out;
}

}  // namespace eagerlm::reference
