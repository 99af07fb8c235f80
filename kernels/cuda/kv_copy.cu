// Copies the first n_positions cached keys and values of one slot to another, for one layer (the
// contract of kernels/cpu/kv_copy.cpp): one grid-strided pass over n_head · n_positions · d_head
// elements of keys and of values, copied as they are (F32, or the 16 bits of a BF16/F16 cache),
// queued on the context's stream like every other op.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/launch.h"

namespace eagerlm::cuda {

namespace {
template <typename E>
__global__ void kv_copy_kernel(KvLayout layout, E* k_cache, E* v_cache, int64_t src_slot, int64_t dst_slot,
                               int64_t n_positions) {
  const int64_t per_head = n_positions * layout.pos_stride;
  const int64_t total = layout.n_head * per_head;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t h = i / per_head;
    const int64_t offset = h * layout.head_stride + (i - h * per_head);
    k_cache[dst_slot * layout.slot_stride + offset] = k_cache[src_slot * layout.slot_stride + offset];
    v_cache[dst_slot * layout.slot_stride + offset] = v_cache[src_slot * layout.slot_stride + offset];
  }
}
}  // namespace

void kv_copy(CudaContext& ctx, const KvLayout& layout, void* k_cache, void* v_cache, int64_t src_slot,
             int64_t dst_slot, int64_t n_positions) {
  if (src_slot == dst_slot || n_positions <= 0 || layout.n_head <= 0) return;
  const int64_t total = layout.n_head * n_positions * layout.pos_stride;
  const unsigned grid = grid_for(total, 256);
  if (dtype_size(layout.dtype) == 2) {
    kv_copy_kernel<<<grid, 256, 0, ctx.stream>>>(layout, static_cast<uint16_t*>(k_cache),
                                                 static_cast<uint16_t*>(v_cache), src_slot, dst_slot, n_positions);
  } else {
    kv_copy_kernel<<<grid, 256, 0, ctx.stream>>>(layout, static_cast<float*>(k_cache), static_cast<float*>(v_cache),
                                                 src_slot, dst_slot, n_positions);
  }
  check_launch("kv_copy");
}

}  // namespace eagerlm::cuda
