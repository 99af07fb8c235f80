// linear_paired (cpu_kernels.inc): y = x·W + bias with bf16 W held in paired panels
// (kernels/common/weights.h), the layout the CPU backend holds 16-bit layers in where its variant
// has AVX2 or AVX-512 and no AMX tiles serve the math (engine/core/cpu_backend.cpp). (f16 has no
// such instruction: it is held in row panels, linear_row_panels.cpp.)
//
// Why a layout of our own: vdpbf16ps multiplies a vector of 16 outputs' pairs of W by one
// broadcast pair of x. GPT-2's input-major W has to be interleaved into such pairs first (the
// bf16 GEMM packs it per call); output-major W can be read in place only as dot products, whose
// sums across lanes and x reloads cost more than the weights' stream at 8 rows. Held as panels of
// pairs, each panel is one sequential stream of exactly the vectors the instruction takes: a
// register tile of up to 8 rows × 32 outputs reads each W vector once for all its rows, with no
// packing and no sums across lanes (2 threads on a Zen 4, 768x3072 from memory, 8 rows: 0.16 ms
// against 0.44 for the in-place dot products). Under float32 math the same
// stream feeds FMAs on every variant: each panel row splits into its even and odd inputs' weights,
// widened exactly (simd::load_pairs), one sequential stream where input-major W is read as one
// stream per row of a chunk (the avx2 variant on a Zen 5, one row of GPT-2's layers: 0.96-1.11x
// the weights' stream against 1.30-1.69x input-major, docs/benchmarks.md).
//
// Under float32 math, where a tile's rows of x would not stay in L1 (8 rows of 3072 inputs), the
// inputs are taken in passes (row_tiles.h: inputs_per_pass), y carried between them.
//
// Every y element is one chain, whatever m, the row's place and the columns a thread gets:
//   kBf16 (bf16 W): acc = bias (or 0), then acc = vdpbf16ps(acc, x pair, W pair) for each pair in order:
//          the bf16 GEMM's chain over input-major W (its tiles carry y between blocks of pairs,
//          which changes no bits);
//   else:  acc = bias (or 0), then acc = fma(x[i], W[i][j], acc) for each input in order:
//          linear_typed's chain (cpu_kernels.inc), so the layout changes no bits.
// Variants without AVX512_BF16 compute kBf16 in scalar float32 (exact: bf16 products fit) with the
// odd input's product added first, as the instruction does (the backend asks for bf16 math only
// with AVX512_BF16; the tests run it on every variant); their float32 chain is linear_typed's (one
// rounding per fma where the variant has FMA, a rounded product and sum in generic).
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "kernels/common/dtype.h"
#include "kernels/cpu/column_split.h"
#include "kernels/cpu/cpu_ops.h"

#include "kernels/cpu/isa_begin.h"

#include "kernels/cpu/row_tiles.h"

#include "kernels/cpu/weight_vectors.h"

#include "kernels/cpu/float_panel_tile.h"

#include "kernels/cpu/bf16_gemm.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

namespace {

using simd::VecF;
constexpr int kVectors = kFloatPanelVectors;  // across a panel's 32 outputs

// Rows of y per register tile: R·kVectors accumulators, a pair's two weight vectors and the x
// broadcasts fit the register file. AVX-512: 8 rows × 2 (x broadcast from memory by each FMA).
// AVX2: 2 rows × 4, with the 4 broadcasts of a pair held (3 rows would need 20 vectors of 16: on a
// Zen 5 they ran 128 rows at 69 % of the FMA peak against 77 %).
// kWidenManyRows: past kWidenPastRows (8, row_tiles.h) a panel is widened once and run
// by the float32 panels' taller tiles from L2: with AVX2 (2-row tiles) 78-82 % of the peak at 128
// rows against 77 %; AVX-512's 8-row tiles widen each pair for 8 rows already.
#if defined(EAGERLM_CPU_HAS_AVX512)
constexpr int kRegisterFileVectors = 32;
constexpr int kRows = 8;
constexpr bool kWidenManyRows = false;
#elif defined(EAGERLM_CPU_HAS_AVX2)
constexpr int kRegisterFileVectors = 16;
constexpr int kRows = 2;
constexpr bool kWidenManyRows = true;
#else
constexpr int kRegisterFileVectors = 16;
constexpr int kRows = 1;
constexpr bool kWidenManyRows = true;
#endif

#if defined(EAGERLM_CPU_HAS_AVX512BF16)
static_assert(kVectors == 2, "a panel is two vectors of 16 outputs");

// Rows [0, R) of y, the panel's first `cols` columns (1-32; the rest of a last panel is zero
// padding, computed and not stored), one pass under bf16 math: y = (first ? bias : y) +
// Σ_p x pair · W pair over the pass's `pairs` (xp and panel start at its first pair).
template <int R>
void panel_tile(const uint32_t* xp, int64_t ldxp, const uint32_t* panel, int64_t pairs, const float* bias, bool first,
                float* y, int64_t ldy, int64_t cols) {
  VecF acc[R][kVectors];
  start_panel_tile<R>(acc, bias, first, y, ldy, cols);
  for (int64_t p = 0; p < pairs; ++p) {
    prefetch_panel_ahead(panel + p * kPanelColumns);
    prefetch_panel_ahead(panel + p * kPanelColumns + 16);
    const __m512bh w0 = (__m512bh)_mm512_loadu_si512(panel + p * kPanelColumns);
    const __m512bh w1 = (__m512bh)_mm512_loadu_si512(panel + p * kPanelColumns + 16);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512bh xv = (__m512bh)_mm512_set1_epi32(int32_t(xp[r * ldxp + p]));
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], xv, w0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], xv, w1);
    }
  }
  store_panel_tile<R>(acc, y, ldy, cols);
}
#else
// bf16 math without vdpbf16ps, in scalar code (x rounded, the odd input's exact product first, as
// the instruction adds them): for the tests, which run every variant; the backend asks for bf16
// math only where the variant has AVX512_BF16.
void columns_bf16_products(const float* x, int64_t ldx, const uint16_t* w, const float* bias, float* y, int64_t ldy,
                           int64_t m, int64_t k, int64_t n0, int64_t n1) {
  for (int64_t r = 0; r < m; ++r) {
    const float* xr = x + r * ldx;
    for (int64_t j = n0; j < n1; ++j) {
      float acc = bias ? bias[j] : 0.0f;
      for (int64_t i = 0; i < k; i += 2) {
        const float odd = bf16_to_float(float_to_bf16(xr[i + 1])) * bf16_to_float(w[paired_panel_index(i + 1, j, k)]);
        const float even = bf16_to_float(float_to_bf16(xr[i])) * bf16_to_float(w[paired_panel_index(i, j, k)]);
        acc += odd;
        acc += even;
      }
      y[r * ldy + j] = acc;
    }
  }
}
#endif

// The tile under float32 math: x as it is, each pair's weights widened exactly into the even and
// odd inputs' vectors (simd::load_pairs), two FMAs per pair, even input first. Where the register
// file holds the accumulators, the pair's widened weights and its two x broadcasts (AVX-512: 16 +
// 4 + 2 of 32), the weights are widened first and each row's broadcasts used across them; else
// (AVX2: 8 + 8 + 2 of 16) vector by vector, each row's broadcasts taken again per vector. (On a
// Zen 5, AVX-512, vector by vector ran 128 rows at 77-78 % of the FMA peak against 86-95 %.)
template <int R>
constexpr bool kWeightsFirst = R* kVectors + 2 * kVectors + 2 <= kRegisterFileVectors;
template <int R>
void panel_tile_f32(const float* x, int64_t ldx, const uint32_t* panel, int64_t pairs, const float* bias, bool first,
                    float* y, int64_t ldy, int64_t cols) {
  VecF acc[R][kVectors];
  start_panel_tile<R>(acc, bias, first, y, ldy, cols);
  for (int64_t p = 0; p < pairs; ++p) {
    const uint32_t* row = panel + p * kPanelColumns;
    // A pair's 32 words are two cache lines.
    prefetch_panel_ahead(row);
    prefetch_panel_ahead(row + 16);
    const float* xe = x + 2 * p;
    if constexpr (kWeightsFirst<R>) {
      VecF even[kVectors], odd[kVectors];
#pragma GCC unroll 8
      for (int c = 0; c < kVectors; ++c) simd::load_pairs(row + c * simd::kLanes, even[c], odd[c]);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const VecF x_even = simd::splat(xe[r * ldx]), x_odd = simd::splat(xe[r * ldx + 1]);
#pragma GCC unroll 8
        for (int c = 0; c < kVectors; ++c) acc[r][c] = simd::fma(x_even, even[c], acc[r][c]);
#pragma GCC unroll 8
        for (int c = 0; c < kVectors; ++c) acc[r][c] = simd::fma(x_odd, odd[c], acc[r][c]);
      }
    } else {
#pragma GCC unroll 8
      for (int c = 0; c < kVectors; ++c) {
        VecF even, odd;
        simd::load_pairs(row + c * simd::kLanes, even, odd);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          acc[r][c] = simd::fma(simd::splat(xe[r * ldx]), even, acc[r][c]);
          acc[r][c] = simd::fma(simd::splat(xe[r * ldx + 1]), odd, acc[r][c]);
        }
      }
    }
  }
  store_panel_tile<R>(acc, y, ldy, cols);
}

// A panel widened once into float32, input by input ([k][32], a float32 panel that
// float_panel_tile.h runs over, the chain of panel_tile_f32): for many rows, where each 2-row
// tile would otherwise widen every pair again.
void widen_panel(const uint32_t* panel, int64_t pairs, float* wide) {
  for (int64_t p = 0; p < pairs; ++p) {
    const uint32_t* row = panel + p * kPanelColumns;
    prefetch_panel_ahead(row);
    prefetch_panel_ahead(row + 16);
    float* even = wide + 2 * p * kPanelColumns;
    float* odd = even + kPanelColumns;
#pragma GCC unroll 8
    for (int c = 0; c < kVectors; ++c) {
      VecF e, o;
      simd::load_pairs(row + c * simd::kLanes, e, o);
      simd::store(even + c * simd::kLanes, e, simd::kLanes);
      simd::store(odd + c * simd::kLanes, o, simd::kLanes);
    }
  }
}

// Columns [n0, n1) (n0 at a panel's start): passes over the inputs (inputs_per_pass), in each
// pass panel by panel, each panel's rows of y in tiles of kRows, or of kPanelTileRows over a
// widened panel (the panel's part stays in L1/L2 for the next tile of rows).
void columns(const float* x, int64_t ldx, const uint16_t* w, const float* bias, float* y, int64_t ldy, int64_t m,
             int64_t k, int64_t n0, int64_t n1, GemmMath math) {
  const bool bf16_math = math == GemmMath::kBf16;
#if !defined(EAGERLM_CPU_HAS_AVX512BF16)
  if (bf16_math) return columns_bf16_products(x, ldx, w, bias, y, ldy, m, k, n0, n1);
#endif
  const bool widen_once = !bf16_math && kWidenManyRows && m > kWidenPastRows;
  // A widened panel runs the float32 panels' tiles (float_panel_tile.h), of their own height.
  const int tile_rows = widen_once ? kPanelTileRows : kRows;
  // Under kBf16 in one pass (row_tiles.h measures both maths).
  const int64_t pass = bf16_math ? k : inputs_per_pass(std::min<int64_t>(m, tile_rows), k, 2);
  // Each pass's inputs of every row are copied (row_tiles.h: copy_x), under kBf16 rounded to pairs
  // at the same stride. pack_x_pairs writes whole vectors of 16 words: a row's last one runs into
  // the next row (which then overwrites it) and past the last row by up to 15 words.
  const int64_t ldp = copied_x_stride(bf16_math ? pass / 2 : pass);
  thread_local std::vector<float> xs;
  thread_local std::vector<uint32_t> xp;
  if (bf16_math && xp.size() < size_t(m * ldp + 16)) xp.resize(size_t(m * ldp + 16));
  if (!bf16_math && xs.size() < size_t(m * ldp)) xs.resize(size_t(m * ldp));
  thread_local std::vector<float> wide;
  if (widen_once && wide.size() < size_t(pass * kPanelColumns)) wide.resize(size_t(pass * kPanelColumns));
  for (int64_t i0 = 0; i0 < k; i0 += pass) {
    const int64_t len = std::min(pass, k - i0);
    const bool first = i0 == 0;
    if (bf16_math) {
#if defined(EAGERLM_CPU_HAS_AVX512BF16)
      pack_x_pairs(x + i0, ldx, m, len, xp.data(), ldp);
#endif
    } else {
      copy_x(x + i0, ldx, m, len, xs.data(), ldp);
    }
    for (int64_t j0 = n0; j0 < n1; j0 += kPanelColumns) {
      const uint32_t* panel = reinterpret_cast<const uint32_t*>(w + j0 * k) + i0 / 2 * kPanelColumns;
      const int64_t cols = std::min(kPanelColumns, n1 - j0);
      const float* b = bias ? bias + j0 : nullptr;
      float* yp = y + j0;  // the panel's outputs; a tile's rows from r0 on
      if (bf16_math) {
#if defined(EAGERLM_CPU_HAS_AVX512BF16)
        for_each_row_tile<kRows>(m, [&](int64_t r0, auto r) {
          panel_tile<r()>(xp.data() + r0 * ldp, ldp, panel, len / 2, b, first, yp + r0 * ldy, ldy, cols);
        });
#endif
      } else if (widen_once) {
        widen_panel(panel, len / 2, wide.data());
        for_each_row_tile<kPanelTileRows>(m, [&](int64_t r0, auto r) {
          float_panel_tile<WeightType::kF32, r(), false>(xs.data() + r0 * ldp, ldp, wide.data(), len, b, first,
                                                         yp + r0 * ldy, ldy, cols);
        });
      } else {
        for_each_row_tile<kRows>(m, [&](int64_t r0, auto r) {
          panel_tile_f32<r()>(xs.data() + r0 * ldp, ldp, panel, len / 2, b, first, yp + r0 * ldy, ldy, cols);
        });
      }
    }
  }
}

}  // namespace

void linear_paired(const float* x, int64_t ldx, const Weights& w, const float* bias, float* y, int64_t ldy, int64_t m,
                   int64_t k, int64_t n, GemmMath math) {
  if (m == 0 || n == 0) return;
  const auto* halves = static_cast<const uint16_t*>(w.data);
  detail::split_columns(
      m, k, n, [&](int64_t n0, int64_t n1) { columns(x, ldx, halves, bias, y, ldy, m, k, n0, n1, math); },
      kPanelColumns);
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
