// gemm_bf16 (bf16_gemm.h): prefill with bf16 weights on vdpbf16ps, which multiplies pairs of
// bf16 and adds both products into a float32 lane: twice the multiply-adds of a float32 FMA per
// instruction, and half the bytes of W. OpenBLAS's sbgemm would do the same but Debian's build
// leaves it out, hence our own blocked GEMM:
//
//   x rows are rounded to bf16 pairs (x[r][2p], x[r][2p+1]) once per call, as 32-bit words;
//   W is packed block by block (kBlockPairs pairs of inputs × kPanel columns) into the layout the
//   instruction wants: for pair p and column c the word (W[2p][c], W[2p+1][c]);
//   register tiles of up to 8 rows × 3 vectors (48 columns) accumulate over a block, reloading
//   from y between blocks; a broadcast x word times a packed W vector is one vdpbf16ps.
// Odd k pads the last pair with zeros; columns past the panel's end are packed as zeros and
// never stored. Where the CPU has AMX (cpu::amx_enabled()), the same packed words feed tile
// products instead (bf16_gemm_amx.cpp, gemm_tiles below). Output-major W at few rows of x is not
// packed at all: each engine reads it in place (reads_w_in_place; gemm_vector_in_place,
// gemm_tiles_in_place).
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/cpu_ops.h"

#include "kernels/cpu/isa_begin.h"

#include "kernels/cpu/bf16_gemm.h"
#include "kernels/cpu/weight_vectors.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

#if defined(EAGERLM_CPU_HAS_AVX512BF16)

namespace {
// The lanes below count (none when count <= 0).
inline __mmask16 first_lanes(int64_t count) {
  return count <= 0 ? __mmask16(0) : count >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << count) - 1u);
}
}  // namespace

void pack_x_pairs(const float* x, int64_t ldx, int64_t m, int64_t k, uint32_t* xp, int64_t ldxp) {
  for (int64_t r = 0; r < m; ++r) {
    const float* row = x + r * ldx;
    for (int64_t i = 0; i < 2 * ldxp; i += 32) {
      const __m512 lo = _mm512_maskz_loadu_ps(first_lanes(k - i), row + i);
      const __m512 hi = _mm512_maskz_loadu_ps(first_lanes(k - i - 16), row + i + 16);
      _mm512_storeu_si512(xp + r * ldxp + i / 2, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
    }
  }
}

namespace {

constexpr int64_t kBlockPairs = 128;  // 256 inputs per packed block
constexpr int64_t kPanel = 192;       // columns per packed block: 128·192 words = 96 KiB, in L2
constexpr int kTileRows = 8;
constexpr int kTileVectors = 3;  // 8·3 accumulators, 3 W vectors: 27 of the 32 registers

// bp[(p - p0)·ldbp + c] = (W[2p][j0 + c], W[2p + 1][j0 + c]) for p in [p0, p1), c < ldbp, W
// input-major: two rows of 16 halves interleaved by one two-source permute.
void pack_input_major(const uint16_t* w, int64_t k, int64_t n, int64_t p0, int64_t p1, int64_t j0, int64_t cols,
                      uint32_t* bp, int64_t ldbp) {
  // Output half t·2 from the even row's half t, t·2 + 1 from the odd row's (indices 32 + t).
  const __m512i interleave = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39, 7, 38,
                                              6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
  for (int64_t p = p0; p < p1; ++p) {
    const uint16_t* even = w + 2 * p * n + j0;
    const uint16_t* odd = 2 * p + 1 < k ? even + n : nullptr;
    for (int64_t c = 0; c < ldbp; c += 16) {
      const __mmask16 mask = first_lanes(cols - c);
      // 16 halves of each row in the low half of a vector (a 32-lane mask, 16 lanes used).
      const __m512i a = _mm512_maskz_loadu_epi16(__mmask32(mask), even + c);
      const __m512i b = odd ? _mm512_maskz_loadu_epi16(__mmask32(mask), odd + c) : _mm512_setzero_si512();
      const __m512i pairs = _mm512_permutex2var_epi16(a, interleave, b);
      _mm512_storeu_si512(bp + (p - p0) * ldbp + c, pairs);
    }
  }
}

// The same block for W output-major [n, k]: a pair is one 32-bit word of a row, gathered from 16
// rows at once (the last pair of an odd k, a single half, is copied alone).
void pack_output_major(const uint16_t* w, int64_t k, int64_t p0, int64_t p1, int64_t j0, int64_t cols, uint32_t* bp,
                       int64_t ldbp) {
  const int64_t whole_pairs = k / 2;
  for (int64_t c = 0; c < ldbp; c += 16) {
    const __mmask16 mask = first_lanes(cols - c);
    const uint16_t* rows = w + (j0 + c) * k;
    const __m512i row_offsets = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32(int32_t(k)));
    for (int64_t p = p0; p < std::min(p1, whole_pairs); ++p) {
      const __m512i index = _mm512_add_epi32(row_offsets, _mm512_set1_epi32(int32_t(2 * p)));
      const __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), mask, index, rows, 2);
      _mm512_storeu_si512(bp + (p - p0) * ldbp + c, v);
    }
    if (p1 > whole_pairs) {  // odd k: the last pair is (W[j][k - 1], 0)
      uint32_t* out = bp + (whole_pairs - p0) * ldbp + c;
      for (int64_t l = 0; l < 16; ++l) out[l] = l < cols - c ? rows[l * k + k - 1] : 0;
    }
  }
}

// Rows [0, R) of y, columns [0, C·16) (the last vector `last` columns): y (+)= Σ_p x pair · W pair
// over `pairs` packed pairs. first: start from the bias (or 0) instead of y.
template <int R, int C>
inline void tile(const uint32_t* xp, int64_t ldxp, const uint32_t* bp, int64_t ldbp, int64_t pairs, const float* bias,
                 float* y, int64_t ldy, int last, bool first) {
  __m512 acc[R][C];
#pragma GCC unroll 8
  for (int c = 0; c < C; ++c) {
    const __mmask16 mask = first_lanes(c == C - 1 ? last : 16);
    const __m512 b = first && bias ? _mm512_maskz_loadu_ps(mask, bias + 16 * c) : _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r][c] = first ? b : _mm512_maskz_loadu_ps(mask, y + r * ldy + 16 * c);
  }
  for (int64_t p = 0; p < pairs; ++p) {
    __m512bh wv[C];
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) wv[c] = (__m512bh)_mm512_loadu_si512(bp + p * ldbp + 16 * c);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512bh xv = (__m512bh)_mm512_set1_epi32(int32_t(xp[r * ldxp + p]));
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], xv, wv[c]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c)
      _mm512_mask_storeu_ps(y + r * ldy + 16 * c, first_lanes(c == C - 1 ? last : 16), acc[r][c]);
  }
}

// One packed block for R rows across the panel's `cols` columns.
template <int R>
void block_rows(const uint32_t* xp, int64_t ldxp, const uint32_t* bp, int64_t ldbp, int64_t pairs, const float* bias,
                float* y, int64_t ldy, int64_t cols, bool first) {
  int64_t c = 0;
  for (; c + 16 * kTileVectors <= cols; c += 16 * kTileVectors)
    tile<R, kTileVectors>(xp, ldxp, bp + c, ldbp, pairs, bias ? bias + c : nullptr, y + c, ldy, 16, first);
  for (; c < cols; c += 16)
    tile<R, 1>(xp, ldxp, bp + c, ldbp, pairs, bias ? bias + c : nullptr, y + c, ldy,
               int(std::min<int64_t>(16, cols - c)), first);
}

void block(int rows, const uint32_t* xp, int64_t ldxp, const uint32_t* bp, int64_t ldbp, int64_t pairs,
           const float* bias, float* y, int64_t ldy, int64_t cols, bool first) {
  static_assert(kTileRows == 8);
  switch (rows) {
    case 1: return block_rows<1>(xp, ldxp, bp, ldbp, pairs, bias, y, ldy, cols, first);
    case 2: return block_rows<2>(xp, ldxp, bp, ldbp, pairs, bias, y, ldy, cols, first);
    case 3: return block_rows<3>(xp, ldxp, bp, ldbp, pairs, bias, y, ldy, cols, first);
    case 4: return block_rows<4>(xp, ldxp, bp, ldbp, pairs, bias, y, ldy, cols, first);
    case 5: return block_rows<5>(xp, ldxp, bp, ldbp, pairs, bias, y, ldy, cols, first);
    case 6: return block_rows<6>(xp, ldxp, bp, ldbp, pairs, bias, y, ldy, cols, first);
    case 7: return block_rows<7>(xp, ldxp, bp, ldbp, pairs, bias, y, ldy, cols, first);
    case 8: return block_rows<8>(xp, ldxp, bp, ldbp, pairs, bias, y, ldy, cols, first);
  }
}

// Packs W's block of pairs [p0, p1) × columns [j0, j0 + cols) into bp (rows ldbp words).
void pack_block(const uint16_t* w, bool input_major, int64_t k, int64_t n, int64_t p0, int64_t p1, int64_t j0,
                int64_t cols, uint32_t* bp, int64_t ldbp) {
  if (input_major) {
    pack_input_major(w, k, n, p0, p1, j0, cols, bp, ldbp);
  } else {
    pack_output_major(w, k, p0, p1, j0, cols, bp, ldbp);
  }
}

// The walk both engines share: columns [n0, n1) of W in panels of kPanel, each panel's pairs in
// blocks of kBlockPairs, packed into this thread's buffer and handed to
// on_block(bp, ldbp, p0, block_pairs, j0, cols); on_panel(j0, cols, ldbp) after a panel's last
// block. pad_to_tile: zero pairs after each block up to a multiple of 16 (block_pairs counts them).
template <class OnBlock, class OnPanel>
void for_each_packed_block(const uint16_t* w, bool input_major, int64_t k, int64_t n, int64_t n0, int64_t n1,
                           bool pad_to_tile, OnBlock&& on_block, OnPanel&& on_panel) {
  const int64_t pairs = (k + 1) / 2;
  thread_local std::vector<uint32_t> bp;
  if (bp.size() < size_t(kBlockPairs * kPanel)) bp.resize(size_t(kBlockPairs * kPanel));
  for (int64_t j0 = n0; j0 < n1; j0 += kPanel) {
    const int64_t cols = std::min(kPanel, n1 - j0);
    const int64_t ldbp = (cols + 15) / 16 * 16;
    for (int64_t p0 = 0; p0 < pairs; p0 += kBlockPairs) {
      const int64_t p1 = std::min(pairs, p0 + kBlockPairs);
      pack_block(w, input_major, k, n, p0, p1, j0, cols, bp.data(), ldbp);
      int64_t block_pairs = p1 - p0;
      if (pad_to_tile) {
        const int64_t padded = (block_pairs + 15) / 16 * 16;
        // Zero pairs to meet x's zero pairs: stale words here could be NaN, and NaN·0 is NaN.
        std::memset(bp.data() + block_pairs * ldbp, 0, size_t((padded - block_pairs) * ldbp) * sizeof(uint32_t));
        block_pairs = padded;
      }
      on_block(bp.data(), ldbp, p0, block_pairs, j0, cols);
    }
    on_panel(j0, cols, ldbp);
  }
}

// x as bf16 pairs in this thread's buffer, `rows` rows of ldxp words (rows past m zero).
const uint32_t* packed_x(const float* x, int64_t ldx, int64_t m, int64_t k, int64_t rows, int64_t ldxp) {
  thread_local std::vector<uint32_t> xp;
  if (xp.size() < size_t(rows * ldxp)) xp.resize(size_t(rows * ldxp));
  pack_x_pairs(x, ldx, m, k, xp.data(), ldxp);
  std::memset(xp.data() + m * ldxp, 0, size_t((rows - m) * ldxp) * sizeof(uint32_t));
  return xp.data();
}

// The vdpbf16ps engine: register tiles of up to 8 rows, y itself the accumulator between blocks.
void gemm_vector(const float* x, int64_t ldx, const uint16_t* w, bool input_major, const float* bias, float* y,
                 int64_t ldy, int64_t m, int64_t k, int64_t n, int64_t n0, int64_t n1) {
  const int64_t ldxp = ((k + 1) / 2 + 15) / 16 * 16;
  const uint32_t* xp = packed_x(x, ldx, m, k, m, ldxp);
  for_each_packed_block(
      w, input_major, k, n, n0, n1, false,
      [&](const uint32_t* bp, int64_t ldbp, int64_t p0, int64_t block_pairs, int64_t j0, int64_t cols) {
        for (int64_t r0 = 0; r0 < m; r0 += kTileRows) {
          const int rows = int(std::min<int64_t>(kTileRows, m - r0));
          block(rows, xp + r0 * ldxp + p0, ldxp, bp, ldbp, block_pairs, bias ? bias + j0 : nullptr, y + r0 * ldy + j0,
                ldy, cols, p0 == 0);
        }
      },
      [](int64_t, int64_t, int64_t) {});
}

// The vdpbf16ps engine over output-major W read in place (reads_w_in_place): y[r][j] is the dot
// product of W's row j with x's row r rounded to bf16, 32 inputs a vdpbf16ps, the steps going in
// turn to kDotAcc accumulators (two chains in flight for one row of x), which are then added in
// order and their lanes by reduce_add's fixed tree. That chain is the same whatever the rows of
// the call, so a row's result does not depend on the other rows (m <= kMaxDirectVectorRows).
// A tile is R rows of x against one row of W, each W vector loaded once for all R rows: one W row
// at a time, so that W is read as one sequential stream. Several W rows side by side are several
// streams, which the prefetchers of a Zen 4 follow worse (two threads, the 768x50257 head: one row
// of x 3.0 ms with 4 W rows a tile against 2.3 with one; four rows of x 5.4 ms with 3 W rows a
// tile against 2.6-2.9 with one).
constexpr int kDotAcc = 2;
constexpr int kDotGroupRows = 8;  // R: 8·kDotAcc accumulators

template <int R>
inline void dot_tile(const uint32_t* xg, const uint16_t* w, int64_t k, float* y, int64_t ldy) {
  __m512 acc[R][kDotAcc];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
    for (int a = 0; a < kDotAcc; ++a) acc[r][a] = _mm512_setzero_ps();
  }
  // The 32 inputs from pair p into accumulator a; xg holds x vector by vector (gemm_vector_in_place).
  auto step = [&](int a, int64_t p) {
    const __m512bh wv = (__m512bh)_mm512_loadu_si512(w + 2 * p);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      acc[r][a] = _mm512_dpbf16_ps(acc[r][a], (__m512bh)_mm512_loadu_si512(xg + (p / 16 * R + r) * 16), wv);
  };
  const int64_t pairs = k / 2;
  int64_t p = 0;
  for (; p + 16 * kDotAcc <= pairs; p += 16 * kDotAcc) {
#pragma GCC unroll 2
    for (int a = 0; a < kDotAcc; ++a) step(a, p + 16 * a);
  }
  for (; p < pairs; p += 16) step(0, p);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    __m512 sum = acc[r][0];
#pragma GCC unroll 2
    for (int a = 1; a < kDotAcc; ++a) sum = _mm512_add_ps(sum, acc[r][a]);
    y[r * ldy] = simd::reduce_add(sum);
  }
}

// W rows [n0, n1) against R rows of x.
#ifndef DOT_AHEAD
#define DOT_AHEAD 6
#endif
template <int R>
void dot_rows(const uint32_t* xg, const uint16_t* w, int64_t k, float* y, int64_t ldy, int64_t n0, int64_t n1) {
  for (int64_t j = n0; j < n1; ++j) dot_tile<R>(xg, w + j * k, k, y + j, ldy);
}

void dot_group(int rows, const uint32_t* xg, const uint16_t* w, int64_t k, float* y, int64_t ldy, int64_t n0,
               int64_t n1) {
  static_assert(kDotGroupRows == 8);
  switch (rows) {
    case 1: return dot_rows<1>(xg, w, k, y, ldy, n0, n1);
    case 2: return dot_rows<2>(xg, w, k, y, ldy, n0, n1);
    case 3: return dot_rows<3>(xg, w, k, y, ldy, n0, n1);
    case 4: return dot_rows<4>(xg, w, k, y, ldy, n0, n1);
    case 5: return dot_rows<5>(xg, w, k, y, ldy, n0, n1);
    case 6: return dot_rows<6>(xg, w, k, y, ldy, n0, n1);
    case 7: return dot_rows<7>(xg, w, k, y, ldy, n0, n1);
    case 8: return dot_rows<8>(xg, w, k, y, ldy, n0, n1);
  }
}

// Bytes of W per slice when several groups of x rows pass over it: kept in L2 for the next group.
// And bytes of x per group, which every W row reads whole: within L1 (32 KiB on Zen 4), else the
// group is fewer rows (mlp c_proj, k = 3072: 8 rows of x, 48 KiB, 0.33 ms on two Zen 4 threads;
// two groups of 4 over L2 slices of W, 0.28 ms).
constexpr int64_t kDotSliceBytes = 64 << 10, kDotGroupXBytes = 24 << 10;

// Columns [n0, n1) of y[m, n] = bf16(x)·Wᵀ for output-major W [n, k], k a multiple of 32 and
// m <= kMaxDirectVectorRows: x rows in near-equal groups of at most kDotGroupRows (fewer where their x
// is past kDotGroupXBytes), W in slices that
// stay in L2 while every group passes over them. A group's x is held vector by vector,
// [k / 32][rows][16 words], so that a step's row vectors sit at constant offsets from one pointer
// (with a pointer per row GCC spilled them, as linear_transposed_typed.cpp found for its tiles).
void gemm_vector_in_place(const float* x, int64_t ldx, const uint16_t* w, float* y, int64_t ldy, int64_t m, int64_t k,
                          int64_t n0, int64_t n1) {
  const int64_t ldxp = k / 2, vectors = k / 32;
  const uint32_t* xp = packed_x(x, ldx, m, k, m, ldxp);
  // Whole cache lines: a vector load across two lines costs two.
  thread_local std::vector<uint32_t> xg_storage;
  if (xg_storage.size() < size_t(m * ldxp + 16)) xg_storage.resize(size_t(m * ldxp + 16));
  uint32_t* const xg = xg_storage.data() + (16 - (reinterpret_cast<uintptr_t>(xg_storage.data()) / 4) % 16) % 16;
  const int64_t group_rows = std::clamp<int64_t>(kDotGroupXBytes / (2 * k), 1, kDotGroupRows);
  const int64_t groups = (m + group_rows - 1) / group_rows;
  int64_t first_row[kMaxDirectVectorRows + 1] = {0};  // group g: rows [first_row[g], first_row[g + 1])
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t r0 = first_row[g], r1 = r0 + (m - r0) / (groups - g), rows = r1 - r0;
    first_row[g + 1] = r1;
    for (int64_t v = 0; v < vectors; ++v) {
      for (int64_t r = 0; r < rows; ++r)
        std::memcpy(xg + r0 * ldxp + (v * rows + r) * 16, xp + (r0 + r) * ldxp + v * 16, 64);
    }
  }
  const int64_t slice = groups == 1 ? n1 - n0 : std::max<int64_t>(12, kDotSliceBytes / (2 * k) / 12 * 12);
  for (int64_t j0 = n0; j0 < n1; j0 += slice) {
    const int64_t j1 = std::min(n1, j0 + slice);
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t r0 = first_row[g];
      dot_group(int(first_row[g + 1] - r0), xg + r0 * ldxp, w, k, y + r0 * ldy, ldy, j0, j1);
    }
  }
}

#if defined(EAGERLM_CPU_HAS_AMX_GEMM)
// The AMX engine (bf16_gemm_amx.cpp): whole 16 × 16 tiles only, so x's rows are padded with zero
// rows to a multiple of 16 and each packed block's pairs with zero pairs; a panel accumulates in a
// float32 scratch of whole tiles and goes to y (plus the bias) once its sums are complete.
void gemm_tiles(const float* x, int64_t ldx, const uint16_t* w, bool input_major, const float* bias, float* y,
                int64_t ldy, int64_t m, int64_t k, int64_t n, int64_t n0, int64_t n1) {
  const int64_t ldxp = ((k + 1) / 2 + 15) / 16 * 16, rows = (m + 15) / 16 * 16;
  const uint32_t* xp = packed_x(x, ldx, m, k, rows, ldxp);
  thread_local std::vector<float> acc;
  if (acc.size() < size_t(rows * kPanel)) acc.resize(size_t(rows * kPanel));
  amx_begin();
  for_each_packed_block(
      w, input_major, k, n, n0, n1, true,
      [&](const uint32_t* bp, int64_t ldbp, int64_t p0, int64_t block_pairs, int64_t, int64_t) {
        amx_block(xp + p0, ldxp, bp, ldbp, acc.data(), ldbp, rows, ldbp, block_pairs, p0 == 0);
      },
      [&](int64_t j0, int64_t cols, int64_t ldbp) {
        for (int64_t r = 0; r < m; ++r) {
          const float* sums = acc.data() + r * ldbp;
          float* out = y + r * ldy + j0;
          if (bias) {
            for (int64_t c = 0; c < cols; ++c) out[c] = sums[c] + bias[j0 + c];
          } else {
            std::memcpy(out, sums, size_t(cols) * sizeof(float));
          }
        }
      });
  amx_end();
}

// Output-major W with k a multiple of 32 and at most 16 rows of x (reads_w_in_place): x is the
// tiles' second operand, as pairs by row of x, and W their first, read in place 16 rows at a
// time; W rows past the last whole 16 go to gemm_tiles.
void gemm_tiles_in_place(const float* x, int64_t ldx, const uint16_t* w, float* y, int64_t ldy, int64_t m, int64_t k,
                         int64_t n0, int64_t n1) {
  const int64_t pairs = k / 2;
  thread_local std::vector<uint32_t> xt;
  thread_local std::vector<float> out;
  if (xt.size() < size_t(pairs * 16)) xt.resize(size_t(pairs * 16));
  out.resize(256);
  const uint32_t* xp = packed_x(x, ldx, m, k, 16, pairs);
  for (int64_t p = 0; p < pairs; ++p) {
    for (int64_t r = 0; r < 16; ++r) xt[size_t(p * 16 + r)] = xp[r * pairs + p];
  }
  const int64_t whole = n0 + (n1 - n0) / 16 * 16;
  amx_begin();
  for (int64_t c0 = n0; c0 < whole; c0 += 16) {
    amx_rows_tile(w + c0 * k, k, xt.data(), 16, pairs, out.data());
    for (int64_t i = 0; i < 16; ++i) {
      for (int64_t r = 0; r < m; ++r) y[r * ldy + c0 + i] = out[size_t(i * 16 + r)];
    }
  }
  amx_end();
  if (whole < n1) gemm_tiles(x, ldx, w, false, nullptr, y, ldy, m, k, n1, whole, n1);
}
#endif

}  // namespace

void gemm_bf16(const float* x, int64_t ldx, const uint16_t* w, bool input_major, const float* bias, float* y,
               int64_t ldy, int64_t m, int64_t k, int64_t n, int64_t n0, int64_t n1) {
  if (k == 0) {  // no sums: y is the bias (or zero)
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t c = n0; c < n1; ++c) y[r * ldy + c] = bias ? bias[c] : 0.0f;
    }
    return;
  }
#if defined(EAGERLM_CPU_HAS_AMX_GEMM)
  if (cpu::amx_enabled()) {
    if (reads_w_in_place(input_major, m, k)) return gemm_tiles_in_place(x, ldx, w, y, ldy, m, k, n0, n1);
    return gemm_tiles(x, ldx, w, input_major, bias, y, ldy, m, k, n, n0, n1);
  }
#endif
  if (reads_w_in_place(input_major, m, k)) return gemm_vector_in_place(x, ldx, w, y, ldy, m, k, n0, n1);
  gemm_vector(x, ldx, w, input_major, bias, y, ldy, m, k, n, n0, n1);
}

#endif  // EAGERLM_CPU_HAS_AVX512BF16

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
