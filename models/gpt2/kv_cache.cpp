#include "models/gpt2/kv_cache.h"

namespace eagerlm::gpt2 {

size_t KvCache::bytes_needed(const Config& c, int64_t max_slots, int64_t max_len) {
  return 2 * size_t(c.n_layer) * size_t(max_slots) * size_t(max_len) * size_t(c.n_embd) * sizeof(float);
}

KvCache::KvCache(const Config& c, int64_t max_slots, int64_t max_len, Device device)
    : max_slots_(max_slots), layout_(kv_layout(max_len, c.n_head, c.d_head())) {
  // Tensors are at most rank 4, so layers and slots share the leading dimension.
  const Shape shape{c.n_layer * max_slots, c.n_head, max_len, c.d_head()};
  // Not zeroed: kernels never read a position at or past a sequence's length (tested with
  // NaN-poisoned caches), and zeroing gigabytes would only delay the first token.
  keys_ = Tensor::empty(shape, DType::kF32, device);
  values_ = Tensor::empty(shape, DType::kF32, device);
}

ops::KvLayerView KvCache::layer(int64_t i) const {
  return {keys_.slice(0, i * max_slots_, max_slots_), values_.slice(0, i * max_slots_, max_slots_), layout_};
}

}  // namespace eagerlm::gpt2
