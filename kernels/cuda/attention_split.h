// How the CUDA attention (attention.cu) divides each query row's key range between blocks, and
// an entry point with an explicit split, so tests can exercise both the single-block and the
// split-and-combine paths whatever GPU they run on; and the scratch the split path needs, so
// that a forward pass can reserve it up front. Plain C++ types only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/kv_layout.h"

namespace eagerlm::cuda {

struct CudaContext;

// Keys are processed in tiles of this many positions (the CPU's kAttentionBlock), and split
// chunks are whole numbers of tiles.
constexpr int64_t kAttentionTile = 64;

struct AttentionSplit {
  int64_t chunk_len = 0;  // key positions per block, a multiple of kAttentionTile
  int n_splits = 1;       // ceil(max_len / chunk_len); 1 means no combine pass
};

// Splits only when (rows × heads) blocks would leave the GPU idle (decode, small batches), and
// never into chunks shorter than two tiles. Decided on the host from max_len alone: the actual
// lengths live on the device, and blocks whose chunk starts past their row's causal limit exit.
AttentionSplit plan_attention_split(int64_t n_rows, int64_t n_head, int64_t max_len, int sm_count);

// Scratch bytes the split path takes for a step of n_rows query rows cut into plan.n_splits
// chunks: one (max, sum, accumulator[d_head]) record per row, head and chunk. 0 without a split.
size_t attention_scratch_bytes(int64_t n_rows, int64_t n_head, int64_t d_head, const AttentionSplit& plan);

// The most scratch cuda::attention takes for any step of 1..max_rows rows over a cache of
// max_len positions per slot (the plan depends on the row count, not on the lengths).
size_t max_attention_scratch_bytes(int64_t max_rows, int64_t n_head, int64_t d_head, int64_t max_len, int sm_count);

// Grows ctx's scratch now to max_attention_scratch_bytes, so that cuda::attention never has to
// grow it later: growing frees the old buffer, which a captured CUDA graph still points at, and
// is illegal while a graph is being captured (attention refuses with an error then).
void reserve_attention_scratch(CudaContext& ctx, int64_t max_rows, int64_t n_head, int64_t d_head, int64_t max_len);

// cuda::attention with the key range cut into chunks of chunk_len positions (rounded up to a
// multiple of kAttentionTile; chunk_len >= max_len means one block per row and head).
void attention_chunked(CudaContext& ctx, const float* qkv, int64_t ld_qkv, const StepBatch& batch,
                       const KvLayout& layout, const void* k_cache, const void* v_cache, float scale, float* out,
                       int64_t ld_out, int64_t chunk_len);

}  // namespace eagerlm::cuda
