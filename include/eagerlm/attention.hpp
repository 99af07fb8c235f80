// eagerlm's padded, strided, batched attention kernel over a cache the caller owns: each query
// attends its own sequence's valid prefix of a fixed-size cache, so the shapes never change as
// sequences grow. It is the CPU body of the JAX op eagerlm.jax.padded_attention (an XLA FFI call,
// docs/python.md) and is usable from any C++ program holding such a cache. Host memory, CPU only.
#pragma once

#include <cstdint>
#include <string_view>

#include "common.hpp"
#include "export.h"

namespace eagerlm {

// (PaddedAttentionShape, the call's dimensions, is in common.hpp: the engine uses it too.)

// q and out: float32 [batch, new_tokens, heads, head_dim], row-major; k_cache and v_cache:
// [batch, heads, max_len, head_dim] of cache_type "f32", "bf16" or "f16" (the engine's own cache
// layout); lengths: int32 [batch]. Sequence b holds lengths[b] valid cache positions and its
// queries are the last new_tokens of them, so query t attends positions [0, lengths[b] -
// new_tokens + t] (causal); a query before position 0 (lengths[b] < new_tokens) gives zeros, as
// does every query of a sequence with lengths[b] = 0. Positions past lengths[b] are never read.
// scale multiplies the scores (1/sqrt(head_dim) for GPT-2). Softmax is computed online in
// float32; the values equal the engine's own attention bit for bit.
// Throws eagerlm::Error(kInvalidArgument) for a non-positive shape (max_len >= new_tokens >= 1),
// another cache type, a null array, or a length outside [0, max_len] (naming lengths[b]).
EAGERLM_API void padded_attention(const float* q, const void* k_cache, const void* v_cache,
                                  std::string_view cache_type, const int32_t* lengths,
                                  const PaddedAttentionShape& shape, float scale, float* out);

}  // namespace eagerlm
