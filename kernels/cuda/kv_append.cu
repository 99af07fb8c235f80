// Writes a step's new keys and values into the preallocated cache on the GPU (layout in
// kernels/kv_layout.h). One block per activation row: the block finds the row's sequence, then
// its threads copy the row's n_head·d_head key and value columns (contiguous in qkv, and
// contiguous per head in the cache) to position past_len + (row - row_start) of the sequence's
// slot. Nothing else in the cache is touched. Rows belonging to no sequence, and positions at or
// past max_len (a caller bug the engine rules out), are skipped rather than written out of bounds.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/step_batch.cuh"

namespace eagerlm::cuda {

namespace {
__global__ void kv_append_kernel(const float* qkv, StepBatch batch, KvLayout layout,
                                 float* k_cache, float* v_cache) {
  const int row = int(blockIdx.x);
  const int s = block_find_sequence(batch, row);
  if (s < 0) return;
  const int64_t pos = int64_t(batch.past_len[s]) + (row - batch.row_start[s]);
  if (pos < 0 || pos >= layout.max_len) return;
  const int64_t width = layout.n_head * layout.d_head;  // columns of q (and of k, and of v)
  const float* k_row = qkv + int64_t(row) * 3 * width + width;
  const float* v_row = k_row + width;
  const int64_t base = int64_t(batch.slot[s]) * layout.slot_stride + pos * layout.pos_stride;
  for (int64_t c = threadIdx.x; c < width; c += blockDim.x) {
    const int64_t h = c / layout.d_head;
    const int64_t d = c - h * layout.d_head;
    const int64_t dst = base + h * layout.head_stride + d;
    k_cache[dst] = k_row[c];
    v_cache[dst] = v_row[c];
  }
}
}  // namespace

void kv_append(CudaContext& ctx, const float* qkv, const StepBatch& batch, const KvLayout& layout,
               float* k_cache, float* v_cache) {
  if (batch.n_rows <= 0 || batch.n_seq <= 0 || layout.n_head <= 0 || layout.d_head <= 0) return;
  kv_append_kernel<<<unsigned(batch.n_rows), 128, 0, ctx.stream>>>(qkv, batch, layout, k_cache,
                                                                   v_cache);
  check_launch("kv_append");
}

}  // namespace eagerlm::cuda
