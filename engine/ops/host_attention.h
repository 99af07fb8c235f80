// The padded attention kernel over caller-owned host arrays, for callers that hold their own
// cache (eagerlm.jax.padded_attention, the XLA FFI op): the same CPU kernel the engine's
// generation runs, with the JAX op's layout and its rule for lengths shorter than the queries.
#pragma once

#include <cstdint>

#include "eagerlm/common.hpp"
#include "kernels/common/dtype.h"

namespace eagerlm::ops {

// q and out: float32 [batch, new_tokens, heads, head_dim]; k_cache, v_cache: [batch, heads,
// max_len, head_dim] of cache_type (F32, BF16 or F16); lengths: int32 [batch]. Sequence b holds
// lengths[b] valid positions, its queries being the last new_tokens of them: query t attends
// positions [0, lengths[b] - new_tokens + t]. Queries before position 0 (lengths[b] <
// new_tokens: padding) and every query of a sequence with lengths[b] = 0 give zeros. Throws
// kInvalidArgument for a shape that is not positive (batch, heads and head_dim > 0; max_len >=
// new_tokens >= 1), a cache type other than those three, a null array, or a length outside
// [0, max_len] (naming lengths[b]).
void host_padded_attention(const float* q, const void* k_cache, const void* v_cache, DType cache_type,
                           const int32_t* lengths, const PaddedAttentionShape& shape, float scale, float* out);

}  // namespace eagerlm::ops
