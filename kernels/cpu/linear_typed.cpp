// linear_typed: y = x·W + bias with W input-major [k, n] stored as f32, bf16, f16 or int8
// (weights.h), float32 activations and accumulation (linear.cpp: float32 W, the same kernel).
//
// Batch invariance: every element of y is one fixed chain of float operations, whatever the row
// count m, the row's place in the batch, the columns a thread gets and the thread count:
//   f32, bf16, f16:  acc = bias[j] (or 0); acc = fma(x[r][i], W[i][j], acc) for i = 0, 1, ... k-1;
//   int8:            the same over blocks of kInt8Block inputs: p = 0, p = fma(x[r][i], q[i][j], p)
//                    over the block, then acc = fma(scale[block][j], p, acc) (no multiply per
//                    weight: int8 decode runs short of arithmetic before bandwidth).
// (fma is one rounding where the variant has FMA, a rounded product and sum in generic.) Every
// regime below computes exactly that chain, holding acc in a register or in y between chunks
// of k (a float stored and reloaded is unchanged), so a row gives the same bits alone or in any
// batch: what the continuous-batching scheduler promises.
//
// Up to kFewRows rows: register tiles over W in place. A tile is R rows of y by C vectors of
// columns held in registers while a chunk of rows of W streams past: each weight vector is
// widened once and multiplied into all R rows (x broadcast), so W is read from memory once for
// all rows; the next chunk reloads the tile from y (which stays in L1/L2). Chunks keep the reads
// of W in memory order: a chunk's rows are each read left to right across the thread's columns,
// rather than one column tile walking down all k rows (a stride of a whole row, a new page every
// row); how many rows a chunk has, and how far ahead it prefetches, is measured (chunking()).
// More rows: prefill, the same tiles (kTileRows rows each) over packed panels: a block of
// kPanelRows rows × kPanelCols columns of W widened to float32 (exactly: int8 unscaled) into
// thread-local scratch, in strips one tile wide so each tile reads its weights as one sequential
// stream from L2, reused by every group of rows. Columns are split across the OpenMP threads in
// every regime (column_split.h).

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <vector>

#include "kernels/common/dtype.h"
#include "kernels/common/weights.h"
#include "kernels/cpu/column_split.h"
#include "kernels/cpu/cpu_ops.h"

#include "kernels/cpu/isa_begin.h"

#include "kernels/cpu/bf16_gemm.h"
#include "kernels/cpu/weight_vectors.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

namespace {

using simd::kLanes;
using simd::VecF;

// Rows of x handled by the tiles over W in place; more is prefill over packed panels.
constexpr int64_t kFewRows = 32;
// Rows of W per chunk, and how many rows ahead the rows of a tile are prefetched (0: left to the
// hardware). Measured on Zen 4 with two threads, weights streamed from memory (29 GB/s read), one
// row of x at 768x2304: f32 27 GB/s with 16-row chunks (1-row chunks 12, 8-row 18-22); bf16 and
// int8 21-26 GB/s with 16-row chunks prefetched one chunk ahead (no prefetch 15-20; 1-row chunks
// 8-10: too little work per reload of the y tile). Several rows of x: 16-32-row chunks,
// prefetched one chunk ahead. int8 chunks are whole blocks (the block sums must not be cut).
struct Chunking {
  int64_t rows, prefetch;
};
constexpr Chunking chunking(WeightType t, int64_t m) {
  if (t == WeightType::kInt8) return {32, 32};
  if (m == 1) return t == WeightType::kF32 ? Chunking{16, 0} : Chunking{16, 16};
  return t == WeightType::kF32 ? Chunking{16, 16} : Chunking{32, 32};
}

// Rows per register tile and vectors per row: R·C accumulators (int8: block sums), C weight
// vectors and an x broadcast must fit the register file (32 vectors with AVX-512, 16 otherwise).
#if defined(EAGERLM_CPU_HAS_AVX512)
constexpr int kTileRows = 8;
constexpr int tile_vectors(int rows) { return rows == 1 ? 8 : rows == 2 ? 6 : rows == 3 ? 5 : rows <= 5 ? 4 : 3; }
#else
constexpr int kTileRows = 6;
constexpr int tile_vectors(int rows) { return rows == 1 ? 4 : rows == 2 ? 3 : 2; }
#endif

// Prefill panels: kPanelRows × kPanelCols floats of scratch per thread (256 KiB, in L2), in
// strips of one full tile's columns.
constexpr int64_t kPanelRows = 256;  // a multiple of kInt8Block
constexpr int64_t kStrip = tile_vectors(kTileRows) * kLanes;
constexpr int64_t kPanelCols = (256 + kStrip - 1) / kStrip * kStrip;
static_assert(kPanelRows % kInt8Block == 0);

// One tile's operands, every pointer at the tile's first column and first input: W(i, c) at
// w[i·ldw + c], the int8 scales of block b at scales[b·lds + c], x(r, i) at x[r·ldx + i].
struct TileArgs {
  const float* x;
  int64_t ldx;
  const void* w;
  int64_t ldw;
  const float* scales;
  int64_t lds;
  const float* bias;
  float* y;
  int64_t ldy;
  int64_t prefetch;  // rows ahead, 0 for none
  int64_t rows_left; // rows of W from the first one to the end of the matrix (prefetch bound)
};

// Rows [0, R) of y, columns [0, C·kLanes) (the last vector only `last` columns when kPartial):
// y (+)= Σ_{i < len} x[r][i]·W[i][·] as the chain above. first: start from the bias (or 0)
// instead of y, so whatever y held (even NaN) never reaches the result. S is the storage of W
// (float for packed panels), kBlocks the int8 arithmetic (len then whole blocks).
template <WeightType S, bool kBlocks, int R, int C, bool kPartial>
inline void tile(const TileArgs& a, int64_t len, int last, bool first) {
  using E = simd::Storage<S>;
  const E* w = static_cast<const E*>(a.w);
  auto width = [&](int c) { return kPartial && c == C - 1 ? last : kLanes; };
  auto start = [&](int r, int c) {
    if (!first) return simd::load_floats(a.y + r * a.ldy + c * kLanes, width(c));
    return a.bias ? simd::load_floats(a.bias + c * kLanes, width(c)) : simd::zero();
  };
  // The C weight vectors of row i, widened (the prefetch runs a.prefetch rows ahead).
  auto weights = [&](int64_t i, VecF (&wv)[C]) {
    const E* row = w + i * a.ldw;
    if (a.prefetch && i + a.prefetch < a.rows_left) {
      const char* ahead = reinterpret_cast<const char*>(row + a.prefetch * a.ldw);
      for (int b = 0; b < int(((C - 1) * kLanes + width(C - 1)) * sizeof(E)); b += 64) __builtin_prefetch(ahead + b);
    }
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c)
      wv[c] = kPartial && c == C - 1 ? simd::load_partial<S>(row + c * kLanes, last) : simd::load<S>(row + c * kLanes);
  };
  if constexpr (!kBlocks) {
    VecF acc[R][C];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c) acc[r][c] = start(r, c);
    }
    for (int64_t i = 0; i < len; ++i) {
      VecF wv[C];
      weights(i, wv);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const VecF xv = simd::splat(a.x[r * a.ldx + i]);
#pragma GCC unroll 8
        for (int c = 0; c < C; ++c) acc[r][c] = simd::fma(xv, wv[c], acc[r][c]);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c) simd::store(a.y + r * a.ldy + c * kLanes, acc[r][c], width(c));
    }
  } else {
    // Block sums in registers; acc lives in y (from the bias on the first block).
    for (int64_t b0 = 0; b0 < len; b0 += kInt8Block) {
      VecF part[R][C];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
        for (int c = 0; c < C; ++c) part[r][c] = simd::zero();
      }
      for (int64_t i = b0; i < b0 + kInt8Block; ++i) {
        VecF wv[C];
        weights(i, wv);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          const VecF xv = simd::splat(a.x[r * a.ldx + i]);
#pragma GCC unroll 8
          for (int c = 0; c < C; ++c) part[r][c] = simd::fma(xv, wv[c], part[r][c]);
        }
      }
      const float* scales = a.scales + (b0 / kInt8Block) * a.lds;
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c) {
        const VecF s = simd::load_floats(scales + c * kLanes, width(c));
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          const VecF base = start(r, c);
          simd::store(a.y + r * a.ldy + c * kLanes, simd::fma(s, part[r][c], base), width(c));
        }
      }
      first = false;
    }
  }
}

// One chunk of len inputs for R rows across columns [0, cols) of a: full tiles, then single
// vectors, then the partial vector at the end.
template <WeightType S, bool kBlocks, int R>
void chunk_rows(TileArgs a, int64_t len, int64_t cols, bool first) {
  constexpr int C = tile_vectors(R);
  int64_t j = 0;
  auto at = [&](int64_t col) {
    TileArgs t = a;
    t.w = static_cast<const simd::Storage<S>*>(a.w) + col;
    if (t.scales) t.scales += col;
    if (t.bias) t.bias += col;
    t.y += col;
    return t;
  };
  for (; j + C * kLanes <= cols; j += C * kLanes) tile<S, kBlocks, R, C, false>(at(j), len, kLanes, first);
  for (; j + kLanes <= cols; j += kLanes) tile<S, kBlocks, R, 1, false>(at(j), len, kLanes, first);
  if (j < cols) tile<S, kBlocks, R, 1, true>(at(j), len, int(cols - j), first);
}

template <WeightType S, bool kBlocks>
void chunk(const TileArgs& a, int rows, int64_t len, int64_t cols, bool first) {
  static_assert(kTileRows == 6 || kTileRows == 8);
  switch (rows) {
    case 1: return chunk_rows<S, kBlocks, 1>(a, len, cols, first);
    case 2: return chunk_rows<S, kBlocks, 2>(a, len, cols, first);
    case 3: return chunk_rows<S, kBlocks, 3>(a, len, cols, first);
    case 4: return chunk_rows<S, kBlocks, 4>(a, len, cols, first);
    case 5: return chunk_rows<S, kBlocks, 5>(a, len, cols, first);
    case 6: return chunk_rows<S, kBlocks, 6>(a, len, cols, first);
  }
  if constexpr (kTileRows == 8) {
    switch (rows) {
      case 7: return chunk_rows<S, kBlocks, 7>(a, len, cols, first);
      case 8: return chunk_rows<S, kBlocks, 8>(a, len, cols, first);
    }
  }
}

// Calls group(r0, r1) for near-equal groups of at most kTileRows rows covering [0, m) (so 9
// rows are 5 + 4, not 8 + 1).
template <typename Group>
void row_groups(int64_t m, const Group& group) {
  const int64_t groups = (m + kTileRows - 1) / kTileRows;
  for (int64_t g = 0, r0 = 0; g < groups; ++g) {
    const int64_t r1 = r0 + (m - r0) / (groups - g);
    group(r0, r1);
    r0 = r1;
  }
}

struct Problem {
  const float* x;
  int64_t ldx;
  Weights w;
  const float* bias;
  float* y;
  int64_t ldy;
  int64_t m, k, n;
};

// y[0:m, n0:n1] for m <= kFewRows, tiles over W in place, chunk by chunk.
template <WeightType T>
void few_rows(const Problem& p, int64_t n0, int64_t n1) {
  using E = simd::Storage<T>;
  const Chunking ch = chunking(T, p.m);
  for (int64_t i0 = 0; i0 < p.k; i0 += ch.rows) {
    const int64_t len = std::min(p.k, i0 + ch.rows) - i0;
    row_groups(p.m, [&](int64_t r0, int64_t r1) {
      const TileArgs a{p.x + r0 * p.ldx + i0,
                       p.ldx,
                       static_cast<const E*>(p.w.data) + i0 * p.n + n0,
                       p.n,
                       p.w.scales ? p.w.scales + (i0 / kInt8Block) * p.n + n0 : nullptr,
                       p.n,
                       p.bias ? p.bias + n0 : nullptr,
                       p.y + r0 * p.ldy + n0,
                       p.ldy,
                       ch.prefetch,
                       p.k - i0};
      chunk<T, T == WeightType::kInt8>(a, int(r1 - r0), len, n1 - n0, i0 == 0);
    });
  }
}

// panel[s·len·kStrip + i·kStrip + c] = W[i0 + i][j0 + s·kStrip + c] widened exactly (int8: q, no
// scale), zero past cols.
template <WeightType T>
void pack(const Weights& w, int64_t n, int64_t i0, int64_t len, int64_t j0, int64_t cols, float* panel) {
  using E = simd::Storage<T>;
  const E* data = static_cast<const E*>(w.data);
  for (int64_t s0 = 0; s0 < cols; s0 += kStrip) {
    float* strip = panel + (s0 / kStrip) * len * kStrip;
    const int64_t width = std::min(kStrip, cols - s0);
    for (int64_t i = 0; i < len; ++i) {
      const E* src = data + (i0 + i) * n + j0 + s0;
      float* dst = strip + i * kStrip;
      for (int64_t c = 0; c < kStrip; c += kLanes) {
        const int64_t count = std::min<int64_t>(kLanes, width - c);
        const VecF v = count >= kLanes ? simd::load<T>(src + c)
                       : count > 0     ? simd::load_partial<T>(src + c, int(count))
                                       : simd::zero();
        simd::store(dst + c, v, kLanes);
      }
    }
  }
}

// y[0:m, n0:n1] for m > kFewRows: panel by panel, every group of rows over every strip.
template <WeightType T>
void prefill(const Problem& p, int64_t n0, int64_t n1) {
  thread_local std::vector<float> scratch;
  if (scratch.size() < size_t(kPanelRows * kPanelCols)) scratch.resize(size_t(kPanelRows * kPanelCols));
  constexpr bool kBlocks = T == WeightType::kInt8;
  for (int64_t j0 = n0; j0 < n1; j0 += kPanelCols) {
    const int64_t cols = std::min(kPanelCols, n1 - j0);
    for (int64_t i0 = 0; i0 < p.k; i0 += kPanelRows) {
      const int64_t len = std::min(p.k, i0 + kPanelRows) - i0;
      pack<T>(p.w, p.n, i0, len, j0, cols, scratch.data());
      row_groups(p.m, [&](int64_t r0, int64_t r1) {
        for (int64_t s0 = 0; s0 < cols; s0 += kStrip) {
          const int64_t j = j0 + s0;
          const TileArgs a{p.x + r0 * p.ldx + i0,
                           p.ldx,
                           scratch.data() + (s0 / kStrip) * len * kStrip,
                           kStrip,
                           kBlocks ? p.w.scales + (i0 / kInt8Block) * p.n + j : nullptr,
                           p.n,
                           p.bias ? p.bias + j : nullptr,
                           p.y + r0 * p.ldy + j,
                           p.ldy,
                           0,
                           len};
          chunk<WeightType::kF32, kBlocks>(a, int(r1 - r0), len, std::min(kStrip, cols - s0), i0 == 0);
        }
      });
    }
  }
}

template <WeightType T>
void run(const Problem& p, GemmMath math) {
  detail::split_columns(p.m, p.k, p.n, [&](int64_t n0, int64_t n1) {
#if defined(EAGERLM_CPU_HAS_AVX512BF16)
    if (T == WeightType::kBF16 && math == GemmMath::kBf16 && bf16_gemm_takes(p.m, kFewRows, true, p.k)) {
      // Not batch-invariant: these rows round x to bf16, fewer rows keep float32 (cpu_kernels.inc).
      gemm_bf16(p.x, p.ldx, static_cast<const uint16_t*>(p.w.data), true, p.bias, p.y, p.ldy, p.m, p.k, p.n, n0, n1);
      return;
    }
#endif
    if (p.m <= kFewRows) {
      few_rows<T>(p, n0, n1);
    } else {
      prefill<T>(p, n0, n1);
    }
  });
  (void)math;
}

}  // namespace

void linear_typed(const float* x, int64_t ldx, const Weights& w, const float* bias, float* y, int64_t ldy, int64_t m,
                  int64_t k, int64_t n, GemmMath math) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {  // an empty sum: y is the bias
    for (int64_t r = 0; r < m; ++r) {
      if (bias) {
        std::copy(bias, bias + n, y + r * ldy);
      } else {
        std::fill(y + r * ldy, y + r * ldy + n, 0.0f);
      }
    }
    return;
  }
  const Problem p{x, ldx, w, bias, y, ldy, m, k, n};
  switch (w.type) {
    case WeightType::kF32: return run<WeightType::kF32>(p, math);
    case WeightType::kBF16: return run<WeightType::kBF16>(p, math);
    case WeightType::kF16: return run<WeightType::kF16>(p, math);
    case WeightType::kInt8: return run<WeightType::kInt8>(p, math);
  }
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
