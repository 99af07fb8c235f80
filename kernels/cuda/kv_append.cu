// Writes a step's new keys and values into the preallocated cache on the GPU (layout in
// kernels/common/kv_layout.h), rounding them to the cache's type (F32, BF16 or F16: typed_values.cuh).
// One block per activation row: the block finds the row's sequence, then
// its threads copy the row's n_head·d_head key and value columns (contiguous in qkv, and
// contiguous per head in the cache) to position past_len + (row - row_start) of the sequence's
// slot. Nothing else in the cache is touched. Rows belonging to no sequence, and positions at or
// past max_len (a caller bug the engine rules out), are skipped rather than written out of bounds.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/step_batch.cuh"
#include "kernels/cuda/typed_values.cuh"

namespace eagerlm::cuda {

namespace {
template <WeightType C>
__global__ void kv_append_kernel(const float* qkv, StepBatch batch, KvLayout layout, Stored<C>* k_cache,
                                 Stored<C>* v_cache) {
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
    k_cache[dst] = narrow<C>(k_row[c]);
    v_cache[dst] = narrow<C>(v_row[c]);
  }
}

template <WeightType C>
void launch(CudaContext& ctx, const float* qkv, const StepBatch& batch, const KvLayout& layout, void* k_cache,
            void* v_cache) {
  kv_append_kernel<C><<<unsigned(batch.n_rows), 128, 0, ctx.stream>>>(
      qkv, batch, layout, static_cast<Stored<C>*>(k_cache), static_cast<Stored<C>*>(v_cache));
}
}  // namespace

void kv_append(CudaContext& ctx, const float* qkv, const StepBatch& batch, const KvLayout& layout, void* k_cache,
               void* v_cache) {
  if (batch.n_rows <= 0 || batch.n_seq <= 0 || layout.n_head <= 0 || layout.d_head <= 0) return;
  if (layout.dtype == DType::kBF16) {
    launch<WeightType::kBF16>(ctx, qkv, batch, layout, k_cache, v_cache);
  } else if (layout.dtype == DType::kF16) {
    launch<WeightType::kF16>(ctx, qkv, batch, layout, k_cache, v_cache);
  } else {
    launch<WeightType::kF32>(ctx, qkv, batch, layout, k_cache, v_cache);
  }
  check_launch("kv_append");
}

}  // namespace eagerlm::cuda
