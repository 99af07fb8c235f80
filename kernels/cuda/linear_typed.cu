// The products with typed weights on the GPU (contract: linear_typed / linear_transposed_typed of
// kernels/cpu/cpu_kernels.inc; weight layouts: kernels/common/weights.h).
//
// Decode (m <= kTypedGemvRows rows): fused kernels that widen each weight in registers as it is
// read, once for a tile of up to kRowTile rows of x, with float32 accumulation.
//   input-major W [k, n] (linear): a block owns 64 output columns (lane l: columns c0 + l and
//     c0 + 32 + l, so every warp load is 32 consecutive weights); its 8 warps take 32-input
//     blocks of k in turn (an int8 block's partial sum is scaled once by its scale), each lane
//     holding its block's 32 x values and broadcasting them with shuffles; the warps' sums are
//     then added in a fixed order. When 64-column blocks alone would leave the GPU idle, k is
//     also split over blockIdx.z into fixed partial sums that a second kernel adds in order (no
//     atomics: the results repeat bit for bit).
//   output-major W [n, k] (the output head): a warp per output, lanes along k (coalesced), x
//     staged in shared memory in chunks of kChunk inputs, then a warp sum.
// Prefill (more rows): cuBLAS. With GemmMath kFp32, W is dequantized into float32 tiles (the
// values float(q)·s and the exactly widened halves the CPU multiplies) and multiplied by sgemm;
// with kTf32/kBf16, bf16/f16 W goes to cublasGemmEx as it is, with x rounded to W's type
// (tensor cores, float32 accumulation), and int8 W on dequantized tiles in that math.
#include <algorithm>
#include <string>

#include "kernels/common/kernel_error.h"
#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/cublas_gemm.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/typed_values.cuh"

namespace eagerlm::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kBlockCols = 64;  // output columns per block of the input-major kernel
constexpr int kRowTile = 8;     // rows of x per block
constexpr int64_t kChunk = 1024;  // inputs of x staged at a time by the output-major kernel
constexpr int kMaxSplits = 16;
// Float32 elements of one dequantized tile of W (16 MiB).
constexpr int64_t kTileElements = int64_t(4) << 20;

// ---- Decode: input-major W [k, n].
template <WeightType T, int R>
__global__ void __launch_bounds__(kThreads)
    gemv_input_major(const float* x, int64_t ldx, const Stored<T>* w, const float* scales, const float* bias,
                     float* y, int64_t ldy, float* partial, int m, int64_t k, int64_t n, int64_t blocks_per_split) {
  __shared__ float sums[kWarps][R][kBlockCols];
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
  const int64_t c0 = int64_t(blockIdx.x) * kBlockCols;
  const int r0 = int(blockIdx.y) * R;
  const int rows = min(R, m - r0);
  const int64_t n_blocks = (k + kInt8Block - 1) / kInt8Block;
  const int64_t b_begin = int64_t(blockIdx.z) * blocks_per_split;
  const int64_t b_end = min(n_blocks, b_begin + blocks_per_split);
  const int64_t col0 = c0 + lane, col1 = c0 + 32 + lane;

  float acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = 0.0f;
  for (int64_t b = b_begin + warp; b < b_end; b += kWarps) {
    const int64_t i0 = b * kInt8Block;
    const int count = int(min(int64_t(kInt8Block), k - i0));
    float xr[R];
    for (int r = 0; r < R; ++r) xr[r] = (r < rows && lane < count) ? x[int64_t(r0 + r) * ldx + i0 + lane] : 0.0f;
    float part[R][2];
    for (int r = 0; r < R; ++r) part[r][0] = part[r][1] = 0.0f;
    for (int t = 0; t < count; ++t) {
      const int64_t at = (i0 + t) * n;
      const float w0 = col0 < n ? load_widened<T>(w, at + col0) : 0.0f;
      const float w1 = col1 < n ? load_widened<T>(w, at + col1) : 0.0f;
      for (int r = 0; r < R; ++r) {
        const float xv = __shfl_sync(0xffffffffu, xr[r], t);
        part[r][0] += xv * w0;
        part[r][1] += xv * w1;
      }
    }
    float s0 = 1.0f, s1 = 1.0f;
    if constexpr (T == WeightType::kInt8) {
      s0 = col0 < n ? scales[b * n + col0] : 0.0f;
      s1 = col1 < n ? scales[b * n + col1] : 0.0f;
    }
    for (int r = 0; r < R; ++r) {
      acc[r][0] += s0 * part[r][0];
      acc[r][1] += s1 * part[r][1];
    }
  }
  for (int r = 0; r < R; ++r) {
    sums[warp][r][lane] = acc[r][0];
    sums[warp][r][32 + lane] = acc[r][1];
  }
  __syncthreads();
  for (int idx = int(threadIdx.x); idx < R * kBlockCols; idx += kThreads) {
    const int r = idx / kBlockCols, c = idx % kBlockCols;
    const int64_t col = c0 + c;
    if (r >= rows || col >= n) continue;
    float total = 0.0f;
    for (int v = 0; v < kWarps; ++v) total += sums[v][r][c];
    if (partial) {
      partial[(int64_t(blockIdx.z) * m + r0 + r) * n + col] = total;
    } else {
      y[int64_t(r0 + r) * ldy + col] = bias ? bias[col] + total : total;
    }
  }
}

// y[r, c] = bias[c] + Σ_split partial[split][r][c], the splits in order.
__global__ void add_splits(const float* partial, int splits, const float* bias, float* y, int64_t ldy, int m,
                           int64_t n) {
  const int64_t total = int64_t(m) * n;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / n, c = i - r * n;
    float v = 0.0f;
    for (int s = 0; s < splits; ++s) v += partial[int64_t(s) * total + i];
    y[r * ldy + c] = bias ? bias[c] + v : v;
  }
}

// ---- Decode: output-major W [n, k].
template <WeightType T, int R>
__global__ void __launch_bounds__(kThreads)
    gemv_output_major(const float* x, int64_t ldx, const Stored<T>* w, const float* scales, float* y, int64_t ldy,
                      int m, int64_t k, int64_t n) {
  __shared__ float xs[R * kChunk];
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
  const int r0 = int(blockIdx.y) * R;
  const int rows = min(R, m - r0);
  const int64_t j = int64_t(blockIdx.x) * kWarps + warp;
  const int64_t blocks = k / kInt8Block;
  float acc[R];
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
  for (int64_t c0 = 0; c0 < k; c0 += kChunk) {
    const int64_t count = min(kChunk, k - c0);
    __syncthreads();  // the previous chunk has been read
    for (int64_t idx = threadIdx.x; idx < R * count; idx += kThreads) {
      const int r = int(idx / count);
      const int64_t c = idx - int64_t(r) * count;
      xs[r * kChunk + c] = r < rows ? x[int64_t(r0 + r) * ldx + c0 + c] : 0.0f;
    }
    __syncthreads();
    if (j >= n) continue;
    for (int64_t c = lane; c < count; c += 32) {
      float wv = load_widened<T>(w, j * k + c0 + c);
      if constexpr (T == WeightType::kInt8) wv = __fmul_rn(wv, scales[j * blocks + (c0 + c) / kInt8Block]);
      for (int r = 0; r < R; ++r) acc[r] += xs[r * kChunk + c] * wv;
    }
  }
  for (int r = 0; r < R; ++r) {
    const float v = warp_sum(acc[r]);
    if (lane == 0 && j < n && r < rows) y[int64_t(r0 + r) * ldy + j] = v;
  }
}

// ---- Prefill: a tile of W widened to float32.
// Input-major: tile[i, c] = W[i, j0 + c] for i < k, c < cols. Output-major: tile[r, i] =
// W[j0 + r, i] for r < cols (rows of W), i < k.
template <WeightType T>
__global__ void dequantize_tile(const Stored<T>* w, const float* scales, bool input_major, int64_t k, int64_t n,
                                int64_t j0, int64_t cols, float* tile) {
  const int64_t total = k * cols;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    float v;
    if (input_major) {
      const int64_t i = e / cols, c = e - i * cols;
      v = load_widened<T>(w, i * n + j0 + c);
      if constexpr (T == WeightType::kInt8) v = __fmul_rn(v, scales[(i / kInt8Block) * n + j0 + c]);
    } else {
      const int64_t r = e / k, i = e - r * k;
      v = load_widened<T>(w, (j0 + r) * k + i);
      if constexpr (T == WeightType::kInt8) v = __fmul_rn(v, scales[(j0 + r) * (k / kInt8Block) + i / kInt8Block]);
    }
    tile[e] = v;
  }
}

// x [m, k] (row stride ldx) rounded to W's 16-bit type, dense, for cublasGemmEx.
template <WeightType T>
__global__ void round_rows(const float* x, int64_t ldx, int64_t m, int64_t k, Stored<T>* out) {
  const int64_t total = m * k;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = e / k, c = e - r * k;
    out[e] = narrow<T>(x[r * ldx + c]);
  }
}

template <WeightType T, int R>
void launch_gemv(CudaContext& ctx, const float* x, int64_t ldx, const Weights& w, const float* bias, float* y,
                 int64_t ldy, int64_t m, int64_t k, int64_t n, bool input_major) {
  const auto* data = static_cast<const Stored<T>*>(w.data);
  const unsigned row_tiles = unsigned((m + R - 1) / R);
  if (!input_major) {
    const dim3 grid(unsigned((n + kWarps - 1) / kWarps), row_tiles);
    gemv_output_major<T, R><<<grid, kThreads, 0, ctx.stream>>>(x, ldx, data, w.scales, y, ldy, int(m), k, n);
    check_launch("linear_transposed (typed GEMV)");
    return;
  }
  const int64_t col_blocks = (n + kBlockCols - 1) / kBlockCols;
  const int64_t k_blocks = (k + kInt8Block - 1) / kInt8Block;
  // Split k when the column blocks alone would not give every SM two blocks; each split keeps
  // at least one 32-input block per warp.
  const int64_t want = (2 * int64_t(ctx.sm_count) + col_blocks * row_tiles - 1) / (col_blocks * row_tiles);
  const int64_t splits = std::clamp<int64_t>(std::min<int64_t>(want, k_blocks / kWarps), 1, kMaxSplits);
  const int64_t per_split = (k_blocks + splits - 1) / splits;
  const dim3 grid(unsigned(col_blocks), row_tiles, unsigned(splits));
  float* partial = nullptr;
  if (splits > 1) partial = static_cast<float*>(typed_scratch(ctx, size_t(splits * m * n) * sizeof(float)));
  gemv_input_major<T, R>
      <<<grid, kThreads, 0, ctx.stream>>>(x, ldx, data, w.scales, bias, y, ldy, partial, int(m), k, n, per_split);
  check_launch("linear (typed GEMV)");
  if (splits > 1) {
    add_splits<<<grid_for(m * n, kThreads), kThreads, 0, ctx.stream>>>(partial, int(splits), bias, y, ldy, int(m), n);
    check_launch("linear (typed GEMV splits)");
  }
}

template <WeightType T>
void gemv(CudaContext& ctx, const float* x, int64_t ldx, const Weights& w, const float* bias, float* y, int64_t ldy,
          int64_t m, int64_t k, int64_t n, bool input_major) {
  if (m == 1) return launch_gemv<T, 1>(ctx, x, ldx, w, bias, y, ldy, m, k, n, input_major);
  if (m == 2) return launch_gemv<T, 2>(ctx, x, ldx, w, bias, y, ldy, m, k, n, input_major);
  if (m <= 4) return launch_gemv<T, 4>(ctx, x, ldx, w, bias, y, ldy, m, k, n, input_major);
  return launch_gemv<T, kRowTile>(ctx, x, ldx, w, bias, y, ldy, m, k, n, input_major);
}

template <WeightType T>
void prefill(CudaContext& ctx, const float* x, int64_t ldx, const Weights& w, const float* bias, float* y,
             int64_t ldy, int64_t m, int64_t k, int64_t n, bool input_major, const char* op) {
  ldx = row_stride_for_cublas(ldx, m, k);
  ldy = row_stride_for_cublas(ldy, m, n);
  const int im = checked_int(m, op, "m"), ik = checked_int(k, op, "k"), in = checked_int(n, op, "n");
  const int ildx = checked_int(ldx, op, "ldx"), ildy = checked_int(ldy, op, "ldy");
  float beta = 0.0f;
  if (bias) {
    broadcast_bias(ctx, bias, y, ldy, m, n);
    beta = 1.0f;
  }
  const cublasOperation_t op_w = input_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  if constexpr (T == WeightType::kBF16 || T == WeightType::kF16) {
    if (ctx.gemm_math != GemmMath::kFp32) {
      // Tensor cores on W as stored: x rounded to W's type, float32 accumulation and output.
      auto* x16 = static_cast<Stored<T>*>(typed_scratch(ctx, size_t(m * k) * sizeof(Stored<T>)));
      round_rows<T><<<grid_for(m * k, kThreads), kThreads, 0, ctx.stream>>>(x, ldx, m, k, x16);
      check_launch(op);
      const cudaDataType_t type = T == WeightType::kBF16 ? CUDA_R_16BF : CUDA_R_16F;
      const float alpha = 1.0f;
      EAGERLM_CUBLAS_CHECK(cublasGemmEx(ctx.cublas, op_w, CUBLAS_OP_N, in, im, ik, &alpha, w.data, type,
                                        input_major ? in : ik, x16, type, ik, &beta, y, CUDA_R_32F, ildy,
                                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      return;
    }
  }
  // Dequantized tiles: columns of an input-major W, rows of an output-major one.
  const auto* data = static_cast<const Stored<T>*>(w.data);
  const int64_t per_tile = std::max<int64_t>(1, std::min<int64_t>(n, kTileElements / std::max<int64_t>(k, 1)));
  auto* tile = static_cast<float*>(typed_scratch(ctx, size_t(per_tile * k) * sizeof(float)));
  for (int64_t j0 = 0; j0 < n; j0 += per_tile) {
    const int64_t cols = std::min(per_tile, n - j0);
    dequantize_tile<T><<<grid_for(k * cols, kThreads), kThreads, 0, ctx.stream>>>(data, w.scales, input_major, k, n,
                                                                                 j0, cols, tile);
    check_launch(op);
    const int icols = int(cols);
    gemm_f32(ctx, op_w, icols, im, ik, tile, input_major ? icols : std::max(ik, 1), x, ildx, beta, y + j0, ildy);
  }
}

template <WeightType T>
void product(CudaContext& ctx, const float* x, int64_t ldx, const Weights& w, const float* bias, float* y,
             int64_t ldy, int64_t m, int64_t k, int64_t n, bool input_major, const char* op) {
  if (m <= kTypedGemvRows) return gemv<T>(ctx, x, ldx, w, bias, y, ldy, m, k, n, input_major);
  prefill<T>(ctx, x, ldx, w, bias, y, ldy, m, k, n, input_major, op);
}

void dispatch(CudaContext& ctx, const float* x, int64_t ldx, const Weights& w, const float* bias, float* y,
              int64_t ldy, int64_t m, int64_t k, int64_t n, bool input_major, const char* op) {
  if (m <= 0 || n <= 0) return;
  if (m > int64_t(INT32_MAX) || (m <= kTypedGemvRows && ((n + kWarps - 1) / kWarps > int64_t(INT32_MAX))))
    kernel_fail(KernelFault::kUnsupported, std::string("CUDA ") + op + ": the matrix is too large for one launch");
  switch (w.type) {
    case WeightType::kF32: return product<WeightType::kF32>(ctx, x, ldx, w, bias, y, ldy, m, k, n, input_major, op);
    case WeightType::kBF16: return product<WeightType::kBF16>(ctx, x, ldx, w, bias, y, ldy, m, k, n, input_major, op);
    case WeightType::kF16: return product<WeightType::kF16>(ctx, x, ldx, w, bias, y, ldy, m, k, n, input_major, op);
    case WeightType::kInt8: return product<WeightType::kInt8>(ctx, x, ldx, w, bias, y, ldy, m, k, n, input_major, op);
  }
}

}  // namespace

void linear_typed(CudaContext& ctx, const float* x, int64_t ldx, const Weights& w, const float* bias, float* y,
                  int64_t ldy, int64_t m, int64_t k, int64_t n) {
  dispatch(ctx, x, ldx, w, bias, y, ldy, m, k, n, true, "linear (typed)");
}

void linear_transposed_typed(CudaContext& ctx, const float* x, int64_t ldx, const Weights& w, float* y, int64_t ldy,
                             int64_t m, int64_t k, int64_t n) {
  dispatch(ctx, x, ldx, w, nullptr, y, ldy, m, k, n, false, "linear_transposed (typed)");
}

}  // namespace eagerlm::cuda
