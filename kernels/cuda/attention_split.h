// How the CUDA attention (attention.cu) divides each query row's key range between blocks, and
// an entry point with an explicit split, so tests can exercise both the single-block and the
// split-and-combine paths whatever GPU they run on. Plain C++ types only.
#pragma once

#include <cstdint>

#include "kernels/kv_layout.h"

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

// cuda::attention with the key range cut into chunks of chunk_len positions (rounded up to a
// multiple of kAttentionTile; chunk_len >= max_len means one block per row and head).
void attention_chunked(CudaContext& ctx, const float* qkv, int64_t ld_qkv, const StepBatch& batch,
                       const KvLayout& layout, const float* k_cache, const float* v_cache,
                       float scale, float* out, int64_t ld_out, int64_t chunk_len);

}  // namespace eagerlm::cuda
