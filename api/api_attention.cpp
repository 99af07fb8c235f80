// The public face of engine/ops/host_attention.h: the cache type by name, errors translated.
#include <string>

#include "api/library_internal.h"
#include "eagerlm/attention.hpp"
#include "engine/core/error.h"
#include "engine/ops/host_attention.h"

namespace eagerlm {

void padded_attention(const float* q, const void* k_cache, const void* v_cache, std::string_view cache_type,
                      const int32_t* lengths, const PaddedAttentionShape& shape, float scale, float* out) {
  library::translate_errors([&] {
    DType type = DType::kF32;
    if (cache_type == "bf16") {
      type = DType::kBF16;
    } else if (cache_type == "f16") {
      type = DType::kF16;
    } else if (cache_type != "f32") {
      throw Error(ErrorCode::kInvalidArgument,
                  "padded_attention: cache_type must be \"f32\", \"bf16\" or \"f16\", not \"" + std::string(cache_type) + "\"");
    }
    ops::host_padded_attention(q, k_cache, v_cache, type, lengths, shape, scale, out);
  });
}

}  // namespace eagerlm
