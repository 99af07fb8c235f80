// target_logprobs on the GPU: log softmax(h·wteᵀ)[target] per row without the [rows, vocab]
// logits. Rows go in chunks of kRowChunk; for each chunk the vocabulary goes in blocks of
// kVocabBlock ids: cuBLAS writes the block's logits into the context's scratch (through
// linear_transposed, so with the context's GemmMath), then one CUDA block per row reduces them to
// (block maximum, Σ exp(z - block maximum)) and folds that into the row's running maximum and
// sum (online log-sum-exp), keeping the target's logit when the target is in the block. A last
// kernel writes (z_target - max) - log(sum). The scratch holds one block of logits plus three
// floats per row: at most 8 MiB + 3 KiB, however long the vocabulary.
#include <cmath>

#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/launch.h"

namespace eagerlm::cuda {

namespace {

constexpr int64_t kRowChunk = 256;
constexpr int64_t kVocabBlock = kTargetLogprobBlock;
constexpr int kReduceThreads = kTargetLogprobThreads;

// Per row of the chunk: the running maximum, the running sum and the target's logit.
struct RowState {
  float* max;
  float* sum;
  float* target_logit;
};

size_t scratch_bytes(int64_t rows) {
  const int64_t rc = rows < kRowChunk ? rows : kRowChunk;
  return size_t(rc) * size_t(kVocabBlock + 3) * sizeof(float);
}

// Folds block [v0, v0 + nv) of each row's logits (z, row stride nv) into its state. first: the
// state holds nothing yet (the target's logit starts as NaN, which an out-of-range target keeps).
__global__ void fold_block_kernel(const float* z, int64_t rows, int64_t nv, int64_t v0, const int32_t* targets,
                                  RowState state, bool first) {
  __shared__ float scratch[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* row = z + r * nv;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < nv; j += blockDim.x) m = fmaxf(m, row[j]);
    m = block_max(m, scratch);
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < nv; j += blockDim.x) s += expf(row[j] - m);
    s = block_sum(s, scratch);
    if (threadIdx.x == 0) {
      if (first) {
        state.max[r] = m;
        state.sum[r] = s;
        state.target_logit[r] = NAN;
      } else {
        const float old_max = state.max[r], new_max = fmaxf(old_max, m);
        state.sum[r] = state.sum[r] * expf(old_max - new_max) + s * expf(m - new_max);
        state.max[r] = new_max;
      }
      const int64_t t = targets[r];
      if (t >= v0 && t < v0 + nv) state.target_logit[r] = row[t - v0];
    }
  }
}

__global__ void finish_kernel(RowState state, int64_t rows, float* out) {
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += int64_t(gridDim.x) * blockDim.x)
    out[r] = (state.target_logit[r] - state.max[r]) - logf(state.sum[r]);
}

__global__ void fill_nan_kernel(float* out, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = NAN;
}

// Growing the scratch synchronizes and reallocates: illegal while the stream is captured.
void refuse_growth_during_capture(CudaContext& ctx, size_t bytes) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  EAGERLM_CUDA_CHECK(cudaStreamIsCapturing(ctx.stream, &status));
  if (status != cudaStreamCaptureStatusNone)
    kernel_fail(KernelFault::kInternal, "CUDA target_logprobs needs " + std::to_string(bytes) +
                                            " bytes of scratch but only " + std::to_string(ctx.scratch_bytes) +
                                            " were reserved (reserve_target_logprobs_scratch), and the scratch "
                                            "cannot grow while the stream is captured into a CUDA graph");
}

}  // namespace

void reserve_target_logprobs_scratch(CudaContext& ctx, int64_t max_rows) {
  if (max_rows > 0) (void)scratch_buffer(ctx, scratch_bytes(max_rows));
}

void target_logprobs(CudaContext& ctx, const float* h, int64_t ldh, const float* w, const int32_t* targets, float* out,
                     int64_t rows, int64_t d, int64_t vocab) {
  if (rows <= 0) return;
  if (vocab <= 0) {
    fill_nan_kernel<<<grid_for(rows, kElementwiseThreads), kElementwiseThreads, 0, ctx.stream>>>(out, rows);
    check_launch("target_logprobs (empty vocabulary)");
    return;
  }
  const size_t bytes = scratch_bytes(rows);
  if (bytes > ctx.scratch_bytes) refuse_growth_during_capture(ctx, bytes);
  float* const logits = static_cast<float*>(scratch_buffer(ctx, bytes));
  const int64_t rc_max = rows < kRowChunk ? rows : kRowChunk;
  float* const state_base = logits + rc_max * kVocabBlock;
  const RowState state{state_base, state_base + rc_max, state_base + 2 * rc_max};
  for (int64_t r0 = 0; r0 < rows; r0 += kRowChunk) {
    const int64_t rc = rows - r0 < kRowChunk ? rows - r0 : kRowChunk;
    for (int64_t v0 = 0; v0 < vocab; v0 += kVocabBlock) {
      const int64_t nv = vocab - v0 < kVocabBlock ? vocab - v0 : kVocabBlock;
      linear_transposed(ctx, h + r0 * ldh, ldh, w + v0 * d, logits, nv, rc, d, nv);
      fold_block_kernel<<<grid_for(rc, 1), kReduceThreads, 0, ctx.stream>>>(logits, rc, nv, v0, targets + r0, state,
                                                                            v0 == 0);
      check_launch("target_logprobs (reduce)");
    }
    finish_kernel<<<grid_for(rc, kElementwiseThreads), kElementwiseThreads, 0, ctx.stream>>>(state, rc, out + r0);
    check_launch("target_logprobs (finish)");
  }
}

}  // namespace eagerlm::cuda
