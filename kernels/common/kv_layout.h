// Layout of the preallocated KV cache and of one attention step, shared by the CPU and CUDA
// kernels. Plain structs of raw pointers and integers: kernels know nothing of tensors.
//
// Cache layout, per layer: keys[slot][head][position][d_head], values likewise, each element of
// `dtype`: F32 (the default), or BF16 / F16 (rounded to nearest even when written, widened
// exactly when read: half the bytes attention streams at long context).
// For one (sequence, head) pair, keys are a [max_len, d_head] matrix with row stride d_head, so
// the attention over a sequence reads one contiguous block per head, whatever the batch; a new
// token is written at [slot][head][pos][:] without moving anything (nothing is reallocated or
// copied as sequences grow).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"

namespace eagerlm {

struct KvLayout {
  int64_t max_len = 0;  // positions per slot
  int64_t n_head = 0;
  int64_t d_head = 0;
  DType dtype = DType::kF32;  // of the cache elements: F32, BF16 or F16
  // Element strides (derived from the fields above by kv_layout()).
  int64_t pos_stride = 0;   // d_head
  int64_t head_stride = 0;  // max_len * d_head
  int64_t slot_stride = 0;  // n_head * max_len * d_head
};

inline KvLayout kv_layout(int64_t max_len, int64_t n_head, int64_t d_head, DType dtype = DType::kF32) {
  KvLayout l;
  l.dtype = dtype;
  l.max_len = max_len;
  l.n_head = n_head;
  l.d_head = d_head;
  l.pos_stride = d_head;
  l.head_stride = max_len * d_head;
  l.slot_stride = n_head * max_len * d_head;
  return l;
}

// One forward step over a batch of sequences. Sequence s owns rows
// [row_start[s], row_start[s] + n_new[s]) of the step's activations; those rows are its tokens at
// positions [past_len[s], past_len[s] + n_new[s]), and its keys and values live in cache slot
// slot[s]. Arrays have n_seq entries and live on the device the kernel runs on.
struct StepBatch {
  int32_t n_seq = 0;
  int32_t n_rows = 0;  // sum of n_new
  const int32_t* slot = nullptr;
  const int32_t* row_start = nullptr;
  const int32_t* n_new = nullptr;
  const int32_t* past_len = nullptr;
};

}  // namespace eagerlm
