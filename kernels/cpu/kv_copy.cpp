// kv_copy: copies the first n_positions cached keys and values of one slot into another (one
// layer), so that a sequence can continue from another's prefix: the samples of one prompt, beams
// taking over their parent's cache, and prompts reusing a cached prefix held in another slot.
// Bytes are copied as they are, whatever the cache's element type.
#include <cstring>

#include "kernels/common/dtype.h"
#include "kernels/cpu/cpu_ops.h"

#include "kernels/cpu/isa_begin.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

void kv_copy(const KvLayout& layout, void* k_cache, void* v_cache, int64_t src_slot, int64_t dst_slot,
             int64_t n_positions) {
  if (src_slot == dst_slot || n_positions <= 0) return;
  const int64_t element = int64_t(dtype_size(layout.dtype));
  const size_t bytes = size_t(n_positions * layout.pos_stride * element);
  for (void* cache : {k_cache, v_cache}) {
    const char* src = static_cast<const char*>(cache) + src_slot * layout.slot_stride * element;
    char* dst = static_cast<char*>(cache) + dst_slot * layout.slot_stride * element;
    for (int64_t h = 0; h < layout.n_head; ++h)
      std::memcpy(dst + h * layout.head_stride * element, src + h * layout.head_stride * element, bytes);
  }
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
