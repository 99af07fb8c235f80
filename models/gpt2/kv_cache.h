// The preallocated KV cache of one generator: keys and values for every layer, batch slot,
// head and position up to max_len, allocated once. Layout (see kernels/common/kv_layout.h):
// [layer][slot][head][position][d_head]. One (sequence, head) pair's keys are a contiguous
// [max_len, d_head] block, so attention streams them with unit stride, and appending a token
// writes in place: no allocation, copy or shape change per token. Elements are F32, or BF16 /
// F16 (half the bytes attention reads at long context; rounded to nearest even when written).
#pragma once

#include <cstdint>

#include "engine/core/tensor.h"
#include "engine/ops/ops.h"
#include "models/gpt2/config.h"

namespace eagerlm::gpt2 {

class KvCache {
 public:
  KvCache() = default;
  KvCache(const Config& config, int64_t max_slots, int64_t max_len, Device device, DType dtype = DType::kF32);

  int64_t max_slots() const { return max_slots_; }
  int64_t max_len() const { return layout_.max_len; }
  const KvLayout& layout() const { return layout_; }
  size_t bytes() const { return keys_.nbytes() + values_.nbytes(); }
  // Bytes a cache of this size would take, for planning before allocating (SIZE_MAX if that
  // does not fit in size_t).
  static size_t bytes_needed(const Config& config, int64_t max_slots, int64_t max_len, DType dtype = DType::kF32);

  ops::KvLayerView layer(int64_t i) const;
  // Positions [0, n_positions) of slot src, every layer, copied to slot dst (queued on ctx).
  void copy_prefix(const ExecContext& ctx, int64_t src, int64_t dst, int64_t n_positions);

 private:
  int64_t max_slots_ = 0;
  KvLayout layout_;
  Tensor keys_, values_;  // [n_layer, slots, n_head, max_len, d_head] as [n_layer·slots, ...]
};

}  // namespace eagerlm::gpt2
