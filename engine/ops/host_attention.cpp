#include "engine/ops/host_attention.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "engine/core/dtype.h"
#include "engine/core/error.h"
#include "kernels/common/kv_layout.h"
#include "kernels/cpu/cpu_ops.h"

namespace eagerlm::ops {

namespace {

[[noreturn]] void refuse(const std::string& what) {
  throw Error(ErrorCode::kInvalidArgument, "padded_attention: " + what);
}

void check(const float* q, const void* k_cache, const void* v_cache, DType cache_type, const int32_t* lengths,
           const PaddedAttentionShape& s, const float* out) {
  if (s.batch < 1 || s.heads < 1 || s.head_dim < 1 || s.new_tokens < 1 || s.max_len < s.new_tokens)
    refuse("shape must have batch, heads, head_dim >= 1 and max_len >= new_tokens >= 1; got batch " +
           std::to_string(s.batch) + ", new_tokens " + std::to_string(s.new_tokens) + ", heads " +
           std::to_string(s.heads) + ", max_len " + std::to_string(s.max_len) + ", head_dim " +
           std::to_string(s.head_dim));
  if (s.batch * s.new_tokens > INT32_MAX)
    refuse("batch · new_tokens = " + std::to_string(s.batch * s.new_tokens) + " query rows exceed 2^31 - 1");
  if (cache_type != DType::kF32 && cache_type != DType::kBF16 && cache_type != DType::kF16)
    refuse(std::string("the cache must hold f32, bf16 or f16, not ") + dtype_name(cache_type));
  if (!q || !k_cache || !v_cache || !lengths || !out) refuse("a null array");
  for (int64_t b = 0; b < s.batch; ++b)
    if (lengths[b] < 0 || lengths[b] > s.max_len)
      refuse("lengths[" + std::to_string(b) + "] = " + std::to_string(lengths[b]) + " is outside [0, " +
             std::to_string(s.max_len) + "], the cache's positions");
}

}  // namespace

void host_padded_attention(const float* q, const void* k_cache, const void* v_cache, DType cache_type,
                           const int32_t* lengths, const PaddedAttentionShape& shape, float scale, float* out) {
  check(q, k_cache, v_cache, cache_type, lengths, shape, out);
  const int64_t row = shape.heads * shape.head_dim;  // floats per query row, q's and out's
  // The kernel's step: sequence b's real queries are its last min(new_tokens, lengths[b]) rows,
  // at positions from max(0, lengths[b] - new_tokens); its padding rows are zeroed here.
  std::vector<int32_t> slot, row_start, n_new, past_len;
  for (int64_t b = 0; b < shape.batch; ++b) {
    const int64_t real = std::min<int64_t>(shape.new_tokens, lengths[b]);
    const int64_t first_row = b * shape.new_tokens;
    const int64_t padding = shape.new_tokens - real;
    if (padding > 0) std::memset(out + first_row * row, 0, size_t(padding * row) * sizeof(float));
    if (real == 0) continue;
    slot.push_back(int32_t(b));
    row_start.push_back(int32_t(first_row + padding));
    n_new.push_back(int32_t(real));
    past_len.push_back(int32_t(lengths[b] - real));
  }
  if (slot.empty()) return;
  StepBatch step;
  step.n_seq = int32_t(slot.size());
  step.n_rows = int32_t(shape.batch * shape.new_tokens);
  step.slot = slot.data();
  step.row_start = row_start.data();
  step.n_new = n_new.data();
  step.past_len = past_len.data();
  const KvLayout layout = kv_layout(shape.max_len, shape.heads, shape.head_dim, cache_type);
  cpu::attention(q, row, step, layout, k_cache, v_cache, scale, out, row);
}

}  // namespace eagerlm::ops
