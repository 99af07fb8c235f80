#include "models/gpt2/kv_cache.h"

#include <cstdint>

namespace eagerlm::gpt2 {

size_t KvCache::bytes_needed(const Config& c, int64_t max_slots, int64_t max_len, DType dtype) {
  size_t bytes = 2 * dtype_size(dtype);
  for (int64_t factor : {c.n_layer, max_slots, max_len, c.n_embd})
    if (factor < 0 || __builtin_mul_overflow(bytes, size_t(factor), &bytes)) return SIZE_MAX;
  return bytes;
}

KvCache::KvCache(const Config& c, int64_t max_slots, int64_t max_len, Device device, DType dtype)
    : max_slots_(max_slots), layout_(kv_layout(max_len, c.n_head, c.d_head(), dtype)) {
  // Tensors are at most rank 4, so layers and slots share the leading dimension.
  const Shape shape{c.n_layer * max_slots, c.n_head, max_len, c.d_head()};
  // Zeroed, though kernels never read a position at or past a sequence's length (tested with
  // NaN-poisoned caches): writing every page now backs it with memory once, here, where a fresh
  // page first written by a generation step cost that step a page fault (the 8-slot serving
  // benchmark, 16,492 prompt tokens into a 302 MB bf16 cache on a Zen 5: kv_append took 396 ms of
  // prefill steps against 53 ms in a cache touched once when made).
  keys_ = Tensor::zeros(shape, dtype, device);
  values_ = Tensor::zeros(shape, dtype, device);
}

ops::KvLayerView KvCache::layer(int64_t i) const {
  return {keys_.slice(0, i * max_slots_, max_slots_), values_.slice(0, i * max_slots_, max_slots_), layout_};
}

void KvCache::copy_prefix(const ExecContext& ctx, int64_t src, int64_t dst, int64_t n_positions) {
  const int64_t layers = max_slots_ > 0 ? keys_.size(0) / max_slots_ : 0;
  for (int64_t l = 0; l < layers; ++l) {
    ops::KvLayerView view = layer(l);
    ops::kv_copy(ctx, view, src, dst, n_positions);
  }
}

}  // namespace eagerlm::gpt2
