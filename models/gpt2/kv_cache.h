// The preallocated KV cache of one generator: keys and values for every layer, batch slot,
// head and position up to max_len, allocated once. Layout (see kernels/kv_layout.h):
// [layer][slot][head][position][d_head]. One (sequence, head) pair's keys are a contiguous
// [max_len, d_head] block, so attention streams them with unit stride, and appending a token
// writes in place: no allocation, copy or shape change per token.
#pragma once

#include <cstdint>

#include "engine/core/tensor.h"
#include "engine/ops/ops.h"
#include "models/gpt2/config.h"

namespace eagerlm::gpt2 {

class KvCache {
 public:
  KvCache() = default;
  KvCache(const Config& config, int64_t max_slots, int64_t max_len, Device device);

  int64_t max_slots() const { return max_slots_; }
  int64_t max_len() const { return layout_.max_len; }
  const KvLayout& layout() const { return layout_; }
  size_t bytes() const { return keys_.nbytes() + values_.nbytes(); }
  // Bytes a cache of this size would take, for planning before allocating.
  static size_t bytes_needed(const Config& config, int64_t max_slots, int64_t max_len);

  ops::KvLayerView layer(int64_t i) const;

 private:
  int64_t max_slots_ = 0;
  KvLayout layout_;
  Tensor keys_, values_;  // [n_layer, slots, n_head, max_len, d_head] as [n_layer·slots, ...]
};

}  // namespace eagerlm::gpt2
