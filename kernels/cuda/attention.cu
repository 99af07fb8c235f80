// Padded, strided, batched causal attention over the preallocated KV cache on the GPU
// (semantics: kernels/cpu/cpu_ops.h; layout: kernels/common/kv_layout.h), flash-decoding style.
//
// Pass 1, attention_partial_kernel, one launch for the whole step: block (row, head, split)
// takes query row `row` of head `head`, finds the row's sequence s and its causal limit
// past_len[s] + (row - row_start[s]) + 1, and runs an online softmax over the key positions
// [split·chunk_len, min((split+1)·chunk_len, limit)), read through the layout strides straight
// from slot slot[s] of the cache. Keys go in tiles of kAttentionTile positions: the block's warps
// compute the tile's scores (one key per warp at a time, lanes across d_head, coalesced), every
// thread derives the same new running max, the tile's probabilities are formed once in shared
// memory, and each thread rescales and accumulates the output dimensions it owns. A tile past
// the limit is cut short, never padded with reads: no position at or past the limit (so none at
// or past past_len + n_new) is ever read, and whatever the cache holds there (NaN included)
// cannot leak in. A block whose chunk starts at or past the limit exits at once.
// With one split the block writes the normalized output row itself. Otherwise it writes its
// partial (running max m, running sum l, unnormalized accumulator) to the context's scratch and
// pass 2, attention_combine_kernel, merges the chunks that exist for that row:
//   M = max m_i,  out = Σ acc_i·e^(m_i−M) / Σ l_i·e^(m_i−M).
// Both passes derive the limit with the same formula, so pass 2 reads exactly the partials
// pass 1 wrote. A BF16 or F16 cache is widened exactly as it is read (typed_values.cuh): pass 1
// is one template over the cache element type.
#include <algorithm>
#include <string>

#include "kernels/common/kernel_error.h"
#include "kernels/cuda/attention_split.h"
#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/step_batch.cuh"
#include "kernels/cuda/typed_values.cuh"

namespace eagerlm::cuda {

namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kTile = int(kAttentionTile);
static_assert(kThreads >= kTile, "one thread per tile position forms the probabilities");
constexpr int64_t kMinChunk = 2 * kAttentionTile;
constexpr size_t kMaxSharedBytes = 48 * 1024;  // without opting in to more

// Keys row `row` may attend to: positions [0, limit). Clamped to the cache so that even an
// inconsistent batch cannot make a block read outside the slot.
__device__ __forceinline__ int64_t causal_limit(const StepBatch& batch, const KvLayout& layout, int s, int row) {
  const int64_t limit = int64_t(batch.past_len[s]) + (row - batch.row_start[s]) + 1;
  return limit < layout.max_len ? limit : layout.max_len;
}

template <WeightType C>
__global__ void __launch_bounds__(kThreads)
    attention_partial_kernel(const float* qkv, int64_t ld_qkv, StepBatch batch, KvLayout layout,
                             const Stored<C>* k_cache, const Stored<C>* v_cache, float scale, float* out,
                             int64_t ld_out, float* partial, int64_t chunk_len, int n_splits) {
  extern __shared__ float smem[];
  const int64_t d_head = layout.d_head;
  float* q = smem;                // [d_head] the query row, pre-scaled (as the CPU does)
  float* acc = q + d_head;        // [d_head] unnormalized output; acc[d] owned by one thread
  float* scores = acc + d_head;   // [kTile]
  float* probs = scores + kTile;  // [kTile]

  const int row = int(blockIdx.x);
  const int head = int(blockIdx.y);
  const int split = int(blockIdx.z);
  const int tid = int(threadIdx.x);
  const int lane = tid & 31;
  const int warp = tid >> 5;

  const int s = block_find_sequence(batch, row);
  if (s < 0) return;  // uniform: every thread got the same s
  const int64_t limit = causal_limit(batch, layout, s, row);
  const int64_t begin = int64_t(split) * chunk_len;
  if (begin >= limit) return;  // uniform
  const int64_t end = begin + chunk_len < limit ? begin + chunk_len : limit;

  const float* q_src = qkv + int64_t(row) * ld_qkv + int64_t(head) * d_head;
  const int64_t kv_base = int64_t(batch.slot[s]) * layout.slot_stride + head * layout.head_stride;
  const Stored<C>* keys = k_cache + kv_base;
  const Stored<C>* values = v_cache + kv_base;
  for (int64_t d = tid; d < d_head; d += kThreads) {
    q[d] = q_src[d] * scale;
    acc[d] = 0.0f;
  }
  __syncthreads();

  float m_run = -INFINITY;  // identical in every thread: same inputs, same order
  float l_run = 0.0f;
  for (int64_t t0 = begin; t0 < end; t0 += kTile) {
    const int n = int(end - t0 < kTile ? end - t0 : kTile);
    // Scores of the tile's keys; the loop bound is warp-uniform, so warp_sum sees full warps.
    for (int j = warp; j < n; j += kWarps) {
      const Stored<C>* k = keys + (t0 + j) * layout.pos_stride;
      float dot = 0.0f;
      for (int64_t d = lane; d < d_head; d += 32) dot += q[d] * widen<C>(k[d]);
      dot = warp_sum(dot);
      if (lane == 0) scores[j] = dot;
    }
    __syncthreads();  // scores complete
    float tile_max = -INFINITY;
    for (int j = 0; j < n; ++j) tile_max = fmaxf(tile_max, scores[j]);
    const float m_new = fmaxf(m_run, tile_max);
    const float rescale = m_run == -INFINITY ? 0.0f : expf(m_run - m_new);
    // probs of the previous tile were last read before this tile's first barrier.
    if (tid < n) probs[tid] = expf(scores[tid] - m_new);
    __syncthreads();  // probs complete; scores are not read again until rewritten next tile
    float tile_sum = 0.0f;
    for (int j = 0; j < n; ++j) tile_sum += probs[j];
    l_run = l_run * rescale + tile_sum;
    m_run = m_new;
    for (int64_t d = tid; d < d_head; d += kThreads) {
      float a = acc[d] * rescale;
      const Stored<C>* v = values + t0 * layout.pos_stride + d;
      for (int j = 0; j < n; ++j) a += probs[j] * widen<C>(v[j * layout.pos_stride]);
      acc[d] = a;
    }
  }

  if (n_splits == 1) {
    float* dst = out + int64_t(row) * ld_out + int64_t(head) * d_head;
    const float inv_sum = 1.0f / l_run;  // l_run >= 1: the maximum's own term is e^0
    for (int64_t d = tid; d < d_head; d += kThreads) dst[d] = acc[d] * inv_sum;
    return;
  }
  float* rec = partial + ((int64_t(row) * gridDim.y + head) * n_splits + split) * (d_head + 2);
  if (tid == 0) {
    rec[0] = m_run;
    rec[1] = l_run;
  }
  for (int64_t d = tid; d < d_head; d += kThreads) rec[2 + d] = acc[d];
}

__global__ void __launch_bounds__(kThreads)
    attention_combine_kernel(StepBatch batch, KvLayout layout, const float* partial, float* out, int64_t ld_out,
                             int64_t chunk_len, int n_splits) {
  const int row = int(blockIdx.x);
  const int head = int(blockIdx.y);
  const int64_t d_head = layout.d_head;
  const int s = block_find_sequence(batch, row);
  if (s < 0) return;
  const int64_t limit = causal_limit(batch, layout, s, row);
  if (limit <= 0) return;                                // pass 1 wrote nothing for this row either
  int64_t n_used = (limit + chunk_len - 1) / chunk_len;  // splits whose chunk starts < limit
  if (n_used > n_splits) n_used = n_splits;
  const int64_t rec_len = d_head + 2;
  const float* recs = partial + (int64_t(row) * gridDim.y + head) * n_splits * rec_len;

  float m_all = -INFINITY;
  for (int64_t i = 0; i < n_used; ++i) m_all = fmaxf(m_all, recs[i * rec_len]);
  float l_all = 0.0f;
  for (int64_t i = 0; i < n_used; ++i) l_all += recs[i * rec_len + 1] * expf(recs[i * rec_len] - m_all);
  float* dst = out + int64_t(row) * ld_out + int64_t(head) * d_head;
  for (int64_t d = threadIdx.x; d < d_head; d += kThreads) {
    float o = 0.0f;
    for (int64_t i = 0; i < n_used; ++i) o += recs[i * rec_len + 2 + d] * expf(recs[i * rec_len] - m_all);
    dst[d] = o / l_all;
  }
}

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// Growing the scratch synchronizes the stream and reallocates: illegal while the stream is being
// captured into a graph. Reported plainly instead of as an invalidated capture.
void refuse_growth_during_capture(CudaContext& ctx, size_t bytes) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  EAGERLM_CUDA_CHECK(cudaStreamIsCapturing(ctx.stream, &status));
  if (status != cudaStreamCaptureStatusNone)
    kernel_fail(KernelFault::kInternal, "CUDA attention needs " + std::to_string(bytes) +
                                            " bytes of scratch but only " + std::to_string(ctx.scratch_bytes) +
                                            " were reserved (reserve_attention_scratch), and the scratch cannot grow "
                                            "while the step is captured into a CUDA graph");
}

}  // namespace

AttentionSplit plan_attention_split(int64_t n_rows, int64_t n_head, int64_t max_len, int sm_count) {
  AttentionSplit plan;
  plan.chunk_len = round_up(max_len > 0 ? max_len : 1, kAttentionTile);
  plan.n_splits = 1;
  const int64_t work = n_rows * n_head;
  const int64_t target_blocks = 4 * int64_t(sm_count > 0 ? sm_count : 1);
  if (work <= 0 || work >= target_blocks || max_len <= kMinChunk) return plan;
  const int64_t want = (target_blocks + work - 1) / work;
  const int64_t most = (max_len + kMinChunk - 1) / kMinChunk;
  const int64_t splits = want < most ? want : most;
  plan.chunk_len = round_up((max_len + splits - 1) / splits, kAttentionTile);
  plan.n_splits = int((max_len + plan.chunk_len - 1) / plan.chunk_len);
  return plan;
}

size_t attention_scratch_bytes(int64_t n_rows, int64_t n_head, int64_t d_head, const AttentionSplit& plan) {
  if (plan.n_splits <= 1 || n_rows <= 0 || n_head <= 0 || d_head <= 0) return 0;
  return size_t(n_rows) * size_t(n_head) * size_t(plan.n_splits) * size_t(d_head + 2) * sizeof(float);
}

size_t max_attention_scratch_bytes(int64_t max_rows, int64_t n_head, int64_t d_head, int64_t max_len, int sm_count) {
  // Splitting stops once rows × heads fill the GPU, so the loop is short in practice; it runs to
  // max_rows anyway rather than rely on that.
  size_t most = 0;
  for (int64_t rows = 1; rows <= max_rows; ++rows) {
    const AttentionSplit plan = plan_attention_split(rows, n_head, max_len, sm_count);
    most = std::max(most, attention_scratch_bytes(rows, n_head, d_head, plan));
  }
  return most;
}

void reserve_attention_scratch(CudaContext& ctx, int64_t max_rows, int64_t n_head, int64_t d_head, int64_t max_len) {
  const size_t bytes = max_attention_scratch_bytes(max_rows, n_head, d_head, max_len, ctx.sm_count);
  if (bytes > 0) (void)scratch_buffer(ctx, bytes);
}

void attention_chunked(CudaContext& ctx, const float* qkv, int64_t ld_qkv, const StepBatch& batch,
                       const KvLayout& layout, const void* k_cache, const void* v_cache, float scale, float* out,
                       int64_t ld_out, int64_t chunk_len) {
  if (batch.n_rows <= 0 || batch.n_seq <= 0 || layout.n_head <= 0 || layout.d_head <= 0 || layout.max_len <= 0) return;
  if (layout.n_head > 65535)
    kernel_fail(KernelFault::kUnsupported,
                "CUDA attention: n_head = " + std::to_string(layout.n_head) + " exceeds 65535");
  const size_t shared_bytes = size_t(2 * layout.d_head + 2 * kTile) * sizeof(float);
  if (shared_bytes > kMaxSharedBytes)
    kernel_fail(KernelFault::kUnsupported,
                "CUDA attention: d_head = " + std::to_string(layout.d_head) + " is too large");
  chunk_len = round_up(std::clamp<int64_t>(chunk_len, 1, layout.max_len), kAttentionTile);
  const int64_t n_splits = (layout.max_len + chunk_len - 1) / chunk_len;
  if (n_splits > 65535)
    kernel_fail(KernelFault::kUnsupported,
                "CUDA attention: " + std::to_string(n_splits) + " key splits exceed the grid limit of 65535");

  float* partial = nullptr;
  if (n_splits > 1) {
    const size_t bytes =
        attention_scratch_bytes(batch.n_rows, layout.n_head, layout.d_head, AttentionSplit{chunk_len, int(n_splits)});
    if (bytes > ctx.scratch_bytes) refuse_growth_during_capture(ctx, bytes);
    partial = static_cast<float*>(scratch_buffer(ctx, bytes));
  }
  const dim3 grid(unsigned(batch.n_rows), unsigned(layout.n_head), unsigned(n_splits));
  if (layout.dtype == DType::kBF16) {
    using T = Stored<WeightType::kBF16>;
    attention_partial_kernel<WeightType::kBF16><<<grid, kThreads, shared_bytes, ctx.stream>>>(
        qkv, ld_qkv, batch, layout, static_cast<const T*>(k_cache), static_cast<const T*>(v_cache), scale, out, ld_out,
        partial, chunk_len, int(n_splits));
  } else if (layout.dtype == DType::kF16) {
    using T = Stored<WeightType::kF16>;
    attention_partial_kernel<WeightType::kF16><<<grid, kThreads, shared_bytes, ctx.stream>>>(
        qkv, ld_qkv, batch, layout, static_cast<const T*>(k_cache), static_cast<const T*>(v_cache), scale, out, ld_out,
        partial, chunk_len, int(n_splits));
  } else {
    attention_partial_kernel<WeightType::kF32><<<grid, kThreads, shared_bytes, ctx.stream>>>(
        qkv, ld_qkv, batch, layout, static_cast<const float*>(k_cache), static_cast<const float*>(v_cache), scale, out,
        ld_out, partial, chunk_len, int(n_splits));
  }
  check_launch("attention");
  if (n_splits == 1) return;
  const dim3 combine_grid(unsigned(batch.n_rows), unsigned(layout.n_head));
  attention_combine_kernel<<<combine_grid, kThreads, 0, ctx.stream>>>(batch, layout, partial, out, ld_out, chunk_len,
                                                                      int(n_splits));
  check_launch("attention (combine)");
}

void attention(CudaContext& ctx, const float* qkv, int64_t ld_qkv, const StepBatch& batch, const KvLayout& layout,
               const void* k_cache, const void* v_cache, float scale, float* out, int64_t ld_out) {
  const AttentionSplit plan = plan_attention_split(batch.n_rows, layout.n_head, layout.max_len, ctx.sm_count);
  attention_chunked(ctx, qkv, ld_qkv, batch, layout, k_cache, v_cache, scale, out, ld_out, plan.chunk_len);
}

}  // namespace eagerlm::cuda
