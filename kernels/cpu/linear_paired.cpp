// linear_paired (cpu_kernels.inc): y = x·W + bias with bf16 or f16 W held in paired panels
// (kernels/common/weights.h), the layout the CPU backend holds 16-bit layers in where its variant
// has AVX512_BF16 and no AMX tiles serve the math (engine/core/cpu_backend.cpp).
//
// Why a layout of our own: vdpbf16ps multiplies a vector of 16 outputs' pairs of W by one
// broadcast pair of x. GPT-2's input-major W has to be interleaved into such pairs first (the
// bf16 GEMM packs it per call); output-major W can be read in place only as dot products, whose
// sums across lanes and x reloads cost more than the weights' stream at 8 rows. Held as panels of
// pairs, each panel is one sequential stream of exactly the vectors the instruction takes: a
// register tile of up to 8 rows × 32 outputs reads each W vector once for all its rows, with no
// packing and no sums across lanes (2 threads on a Zen 4, 768x3072 from memory, 8 rows: 0.16 ms
// against 0.44 for the in-place dot products). Under float32 math (and for f16, always) the same
// stream feeds FMAs: each panel row splits into its even and odd inputs' weights, widened exactly,
// one sequential stream where input-major W is read as one stream per row of a chunk.
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
// Variants without AVX512_BF16 compute kBf16 in float32 (exact: bf16 products fit) with the odd
// input's product added first, as the instruction does; their float32 chain is linear_typed's
// (one rounding per fma where the variant has FMA, a rounded product and sum in generic). The
// backend holds this layout only for AVX512_BF16 variants, but every variant runs it in the tests.
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

constexpr int kRows = 8;  // rows of y per register tile: 8 × 2 accumulators

#if defined(EAGERLM_CPU_HAS_AVX512BF16)
static_assert(kPanelColumns == 32, "a panel is two vectors of 16 outputs");
// Intrinsics in their zero-masking forms (maskz, all lanes): GCC 12 warns that the plain ones pass
// an "undefined" vector, as weight_vectors.h notes.

// The lanes below count (none when count <= 0).
inline __mmask16 first_lanes(int64_t count) {
  return count <= 0 ? __mmask16(0) : count >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << count) - 1u);
}

// A tile's accumulators start from the bias (or zero) on the first pass over the inputs, else
// from what the last pass stored in y (a stored float reloads unchanged: the chain goes on), lanes
// past the panel's outputs zero; and go to y, those lanes not stored.
template <int R>
inline void start_tile(__m512 (&acc)[R][2], const float* bias, bool first, const float* y, int64_t ldy,
                       __mmask16 lanes0, __mmask16 lanes1) {
  if (!first) {
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      acc[r][0] = _mm512_maskz_loadu_ps(lanes0, y + r * ldy);
      acc[r][1] = _mm512_maskz_loadu_ps(lanes1, y + r * ldy + 16);
    }
    return;
  }
  const __m512 b0 = bias ? _mm512_maskz_loadu_ps(lanes0, bias) : _mm512_setzero_ps();
  const __m512 b1 = bias ? _mm512_maskz_loadu_ps(lanes1, bias + 16) : _mm512_setzero_ps();
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    acc[r][0] = b0;
    acc[r][1] = b1;
  }
}
template <int R>
inline void store_tile(const __m512 (&acc)[R][2], float* y, int64_t ldy, __mmask16 lanes0, __mmask16 lanes1) {
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    _mm512_mask_storeu_ps(y + r * ldy, lanes0, acc[r][0]);
    _mm512_mask_storeu_ps(y + r * ldy + 16, lanes1, acc[r][1]);
  }
}

// Rows [0, R) of y, the panel's first `cols` columns (1-32; the rest of a last panel is zero
// padding, computed and not stored), one pass: y = (first ? bias : y) + Σ_p x pair · W pair over
// the pass's `pairs` (xp and panel start at its first pair).
template <int R>
void panel_tile(const uint32_t* xp, int64_t ldxp, const uint32_t* panel, int64_t pairs, const float* bias, bool first,
                float* y, int64_t ldy, int64_t cols) {
  const __mmask16 lanes0 = first_lanes(cols), lanes1 = first_lanes(cols - 16);
  __m512 acc[R][2];
  start_tile<R>(acc, bias, first, y, ldy, lanes0, lanes1);
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
  store_tile<R>(acc, y, ldy, lanes0, lanes1);
}

// The same tile under float32 math: x as it is, each pair's weights widened exactly into the even
// and odd inputs' vectors (bf16: a shift and a mask; f16: each half narrowed out of its word and
// converted), two FMAs per pair, even input first.
template <int R, bool kF16>
void panel_tile_f32(const float* x, int64_t ldx, const uint32_t* panel, int64_t pairs, const float* bias, bool first,
                    float* y, int64_t ldy, int64_t cols) {
  const __mmask16 lanes0 = first_lanes(cols), lanes1 = first_lanes(cols - 16);
  const __m512i high_halves = _mm512_set1_epi32(int32_t(0xFFFF0000u));
  __m512 acc[R][2];
  start_tile<R>(acc, bias, first, y, ldy, lanes0, lanes1);
  for (int64_t p = 0; p < pairs; ++p) {
    prefetch_panel_ahead(panel + p * kPanelColumns);
    prefetch_panel_ahead(panel + p * kPanelColumns + 16);
    const __m512i v0 = _mm512_loadu_si512(panel + p * kPanelColumns);
    const __m512i v1 = _mm512_loadu_si512(panel + p * kPanelColumns + 16);
    const __m512 even0 = kF16 ? _mm512_maskz_cvtph_ps(0xFFFF, _mm512_maskz_cvtepi32_epi16(0xFFFF, v0))
                              : _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xFFFF, v0, 16));
    const __m512 odd0 = kF16 ? _mm512_maskz_cvtph_ps(
                                   0xFFFF, _mm512_maskz_cvtepi32_epi16(0xFFFF, _mm512_maskz_srli_epi32(0xFFFF, v0, 16)))
                             : _mm512_castsi512_ps(_mm512_and_si512(v0, high_halves));
    const __m512 even1 = kF16 ? _mm512_maskz_cvtph_ps(0xFFFF, _mm512_maskz_cvtepi32_epi16(0xFFFF, v1))
                              : _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xFFFF, v1, 16));
    const __m512 odd1 = kF16 ? _mm512_maskz_cvtph_ps(
                                   0xFFFF, _mm512_maskz_cvtepi32_epi16(0xFFFF, _mm512_maskz_srli_epi32(0xFFFF, v1, 16)))
                             : _mm512_castsi512_ps(_mm512_and_si512(v1, high_halves));
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 xe = _mm512_set1_ps(x[r * ldx + 2 * p]), xo = _mm512_set1_ps(x[r * ldx + 2 * p + 1]);
      acc[r][0] = _mm512_fmadd_ps(xe, even0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(xe, even1, acc[r][1]);
      acc[r][0] = _mm512_fmadd_ps(xo, odd0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(xo, odd1, acc[r][1]);
    }
  }
  store_tile<R>(acc, y, ldy, lanes0, lanes1);
}

// An f16 panel widened once into float32, input by input ([k][32], a float32 panel that
// float_panel_tile.h runs over, the chain of panel_tile_f32): for many rows, where each tile would
// otherwise widen every pair again (f16 takes three instructions a vector, not one).
void widen_f16_panel(const uint32_t* panel, int64_t pairs, float* wide) {
  for (int64_t p = 0; p < pairs; ++p) {
    prefetch_panel_ahead(panel + p * kPanelColumns);
    prefetch_panel_ahead(panel + p * kPanelColumns + 16);
    const __m512i v0 = _mm512_loadu_si512(panel + p * kPanelColumns);
    const __m512i v1 = _mm512_loadu_si512(panel + p * kPanelColumns + 16);
    float* even = wide + 2 * p * kPanelColumns;
    float* odd = even + kPanelColumns;
    _mm512_storeu_ps(even, _mm512_maskz_cvtph_ps(0xFFFF, _mm512_maskz_cvtepi32_epi16(0xFFFF, v0)));
    _mm512_storeu_ps(even + 16, _mm512_maskz_cvtph_ps(0xFFFF, _mm512_maskz_cvtepi32_epi16(0xFFFF, v1)));
    _mm512_storeu_ps(odd, _mm512_maskz_cvtph_ps(
                              0xFFFF, _mm512_maskz_cvtepi32_epi16(0xFFFF, _mm512_maskz_srli_epi32(0xFFFF, v0, 16))));
    _mm512_storeu_ps(odd + 16, _mm512_maskz_cvtph_ps(0xFFFF, _mm512_maskz_cvtepi32_epi16(
                                                                 0xFFFF, _mm512_maskz_srli_epi32(0xFFFF, v1, 16))));
  }
}

// Columns [n0, n1) (n0 at a panel's start): passes over the inputs (inputs_per_pass), in each
// pass panel by panel, each panel's rows of y in tiles of kRows (the panel's part stays in L1/L2
// for the next tile of rows).
void columns(const float* x, int64_t ldx, const uint16_t* w, bool f16, const float* bias, float* y, int64_t ldy,
             int64_t m, int64_t k, int64_t n0, int64_t n1, GemmMath math) {
  const bool bf16_math = !f16 && math == GemmMath::kBf16;
  const bool widen_once = f16 && m > kRows;
  // Under kBf16 in one pass (row_tiles.h measures both maths).
  const int64_t pass = bf16_math ? k : inputs_per_pass(std::min<int64_t>(m, kRows), k, 2);
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
      pack_x_pairs(x + i0, ldx, m, len, xp.data(), ldp);
    } else {
      copy_x(x + i0, ldx, m, len, xs.data(), ldp);
    }
    for (int64_t j0 = n0; j0 < n1; j0 += kPanelColumns) {
      const uint32_t* panel = reinterpret_cast<const uint32_t*>(w + j0 * k) + i0 / 2 * kPanelColumns;
      const int64_t cols = std::min(kPanelColumns, n1 - j0);
      const float* b = bias ? bias + j0 : nullptr;
      if (widen_once) widen_f16_panel(panel, len / 2, wide.data());
      for (int64_t r0 = 0; r0 < m; r0 += kRows)
        with_rows<kRows>(int(std::min<int64_t>(kRows, m - r0)), [&](auto r) {
          float* yt = y + r0 * ldy + j0;
          const float* xt = xs.data() + r0 * ldp;
          if (bf16_math) {
            panel_tile<r()>(xp.data() + r0 * ldp, ldp, panel, len / 2, b, first, yt, ldy, cols);
          } else if (widen_once) {
            float_panel_tile<r(), false>(xt, ldp, wide.data(), len, b, first, yt, ldy, cols);
          } else if (f16) {
            panel_tile_f32<r(), true>(xt, ldp, panel, len / 2, b, first, yt, ldy, cols);
          } else {
            panel_tile_f32<r(), false>(xt, ldp, panel, len / 2, b, first, yt, ldy, cols);
          }
        });
    }
  }
}
#else
// One rounding per product-sum where the variant has FMA (as linear_typed's chain), else two.
inline float multiply_add(float a, float b, float c) {
#if defined(EAGERLM_CPU_HAS_AVX2)
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

// Both maths in scalar code: kBf16 as vdpbf16ps (x rounded, the odd input's exact product first),
// else linear_typed's chain.
void columns(const float* x, int64_t ldx, const uint16_t* w, bool f16, const float* bias, float* y, int64_t ldy,
             int64_t m, int64_t k, int64_t n0, int64_t n1, GemmMath math) {
  auto widen = [f16](uint16_t h) { return f16 ? f16_to_float(h) : bf16_to_float(h); };
  for (int64_t r = 0; r < m; ++r) {
    const float* xr = x + r * ldx;
    for (int64_t j = n0; j < n1; ++j) {
      float acc = bias ? bias[j] : 0.0f;
      for (int64_t i = 0; i < k; i += 2) {
        const float w_even = widen(w[paired_panel_index(i, j, k)]);
        const float w_odd = widen(w[paired_panel_index(i + 1, j, k)]);
        if (!f16 && math == GemmMath::kBf16) {
          const float odd = bf16_to_float(float_to_bf16(xr[i + 1])) * w_odd;
          const float even = bf16_to_float(float_to_bf16(xr[i])) * w_even;
          acc += odd;
          acc += even;
        } else {
          acc = multiply_add(xr[i], w_even, acc);
          acc = multiply_add(xr[i + 1], w_odd, acc);
        }
      }
      y[r * ldy + j] = acc;
    }
  }
}
#endif

}  // namespace

void linear_paired(const float* x, int64_t ldx, const Weights& w, const float* bias, float* y, int64_t ldy, int64_t m,
                   int64_t k, int64_t n, GemmMath math) {
  if (m == 0 || n == 0) return;
  const auto* halves = static_cast<const uint16_t*>(w.data);
  const bool f16 = w.type == WeightType::kF16;
  detail::split_columns(
      m, k, n, [&](int64_t n0, int64_t n1) { columns(x, ldx, halves, f16, bias, y, ldy, m, k, n0, n1, math); },
      kPanelColumns);
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
