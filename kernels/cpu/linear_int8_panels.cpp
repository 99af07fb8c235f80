// linear_int8_panels (cpu_kernels.inc): y = x·W + bias with int8 W held in panels (weights.h:
// [⌈n/32⌉][k][32] bytes, scales [⌈n/32⌉][k/32][32]), the layout the CPU backend holds int8 layers
// in where the variant has AVX-512 (engine/core/cpu_backend.cpp).
//
// Why: linear_typed reads input-major W [k, n] a chunk of rows at a time, one stream per row at a
// stride of n bytes; at one row of x an int8 decode step then ran at 1.5-1.7x the weights' stream
// on a Zen 4 (docs/benchmarks.md). A panel is one sequential stream of blocks of 32 inputs × 32
// outputs (1 KiB) and a second one of their 128 bytes of scales; a register tile of up to kRows
// rows × 32 outputs reads each weight vector once for all its rows.
//
// Every y element is linear_typed's int8 chain, whatever m, the row's place and the columns a
// thread gets (so the layout changes no bits, and a row gives the same bits alone or in a batch):
//   acc = bias (or 0); for each block of kInt8Block inputs, in order:
//     part = 0, part = fma(x[i], q[i][j], part) for each input of the block in order,
//     acc = fma(scale[block][j], part, acc).
// acc lives in y between blocks (a stored float reloads unchanged), and so between the passes
// over the inputs that keep a tile's rows of x in L1 (row_tiles.h). Past kRows rows each panel is
// widened once into float32 (exactly: q, unscaled) and the tiles read that instead of converting
// every vector again for every group of rows.
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels/common/dtype.h"
#include "kernels/common/weights.h"
#include "kernels/cpu/column_split.h"
#include "kernels/cpu/cpu_ops.h"

#include "kernels/cpu/isa_begin.h"

#include "kernels/cpu/row_tiles.h"

#include "kernels/cpu/weight_vectors.h"

#include "kernels/cpu/float_panel_tile.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

namespace {

using simd::kLanes;
using simd::VecF;

// The float32 panels' tile shape (float_panel_tile.h): R·kVectors block sums in place of its
// accumulators. (With AVX2 that is one register more than the 16, and still 3 rows measured faster
// than 2 at 8 and 128 rows on a Zen 5; the backend holds int8 in panels only with AVX-512.)
constexpr int kVectors = kFloatPanelVectors;
constexpr int kRows = kPanelTileRows;

// Rows [0, R) of y, the panel's first `cols` outputs, one block of inputs: the chain above. q is
// the block's [kInt8Block][32] weights (int8, or float widened from them), scales its 32 scales
// (zero past the outputs), x the block's inputs; first: acc starts from the bias (or 0), else from y.
template <typename S, int R>
void block_tile(const float* x, int64_t ldx, const S* q, const float* scales, const float* bias, float* y, int64_t ldy,
                int64_t cols, bool first) {
  constexpr WeightType kStored = std::is_same_v<S, int8_t> ? WeightType::kInt8 : WeightType::kF32;
  VecF part[R][kVectors];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int c = 0; c < kVectors; ++c) part[r][c] = simd::zero();
  }
  if constexpr (kStored == WeightType::kInt8) {
    // The scales' stream, an eighth of the weights' bytes, is prefetched as many blocks ahead as
    // the weights (row_tiles.h): the two cache lines of a block's 32 scales.
    const char* ahead = reinterpret_cast<const char*>(scales) + kPanelPrefetchBytes / 8;
    __builtin_prefetch(ahead);
    __builtin_prefetch(ahead + 64);
  }
  for (int64_t i = 0; i < kInt8Block; ++i) {
    // A cache line holds two inputs' weights.
    if (kStored == WeightType::kInt8 && i % 2 == 0) prefetch_panel_ahead(q + i * kPanelColumns);
    panel_input_fma<kStored, R>(part, x + i, ldx, q + i * kPanelColumns);
  }
#pragma GCC unroll 8
  for (int c = 0; c < kVectors; ++c) {
    const int lanes = panel_lanes_of(c, cols);
    const VecF s = simd::load<WeightType::kF32>(scales + c * kLanes);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      float* yv = y + r * ldy + c * kLanes;
      const VecF acc = !first ? simd::load_floats(yv, lanes)
                       : bias ? simd::load_floats(bias + c * kLanes, lanes)
                              : simd::zero();
      simd::store(yv, simd::fma(s, part[r][c], acc), lanes);
    }
  }
}

// Rows [0, R) of y over `len` inputs of a panel (a pass: x, panel and scales start at its first
// input), block by block; first: the pass is the call's first.
template <typename S, int R>
void panel_tile(const float* x, int64_t ldx, const S* panel, const float* scales, int64_t len, const float* bias,
                bool first, float* y, int64_t ldy, int64_t cols) {
  for (int64_t b = 0; b < len / kInt8Block; ++b)
    block_tile<S, R>(x + b * kInt8Block, ldx, panel + b * kInt8Block * kPanelColumns, scales + b * kPanelColumns, bias,
                     y, ldy, cols, first && b == 0);
}

// Columns [n0, n1) (n0 at a panel's start): passes over the inputs (row_tiles.h:
// inputs_per_pass, whole blocks), in each pass panel by panel, each panel's rows in tiles of kRows.
void columns(const float* x, int64_t ldx, const int8_t* w, const float* scales, const float* bias, float* y,
             int64_t ldy, int64_t m, int64_t k, int64_t n0, int64_t n1) {
  const bool widen_once = m > kRows;
  const int64_t pass = inputs_per_pass(std::min<int64_t>(m, kRows), k, kInt8Block);
  const PassScratch s = pass_scratch(m, pass, widen_once);
  for (int64_t i0 = 0; i0 < k; i0 += pass) {
    const int64_t len = std::min(pass, k - i0);
    copy_x(x + i0, ldx, m, len, s.xs, s.ldp);
    for (int64_t j0 = n0; j0 < n1; j0 += kPanelColumns) {
      const int8_t* panel = w + j0 * k + i0 * kPanelColumns;
      // Block i0/32 of the panel's scales (int8_panel_scale_index).
      const float* panel_scales = scales + j0 / kPanelColumns * k + i0;
      const int64_t cols = std::min(kPanelColumns, n1 - j0);
      const float* b = bias ? bias + j0 : nullptr;
      if (widen_once)
        for (int64_t e = 0; e < len * kPanelColumns; e += kLanes) {
          if (e % 64 == 0) prefetch_panel_ahead(panel + e);
          simd::store(s.wide + e, simd::load<WeightType::kInt8>(panel + e), kLanes);
        }
      for_each_row_tile<kRows>(m, [&](int64_t r0, auto rows) {
        const float* xt = s.xs + r0 * s.ldp;
        float* yt = y + r0 * ldy + j0;
        if (widen_once) {
          panel_tile<float, rows()>(xt, s.ldp, s.wide, panel_scales, len, b, i0 == 0, yt, ldy, cols);
        } else {
          panel_tile<int8_t, rows()>(xt, s.ldp, panel, panel_scales, len, b, i0 == 0, yt, ldy, cols);
        }
      });
    }
  }
}

}  // namespace

void linear_int8_panels(const float* x, int64_t ldx, const Weights& w, const float* bias, float* y, int64_t ldy,
                        int64_t m, int64_t k, int64_t n) {
  if (m == 0 || n == 0) return;
  const auto* q = static_cast<const int8_t*>(w.data);
  detail::split_columns(
      m, k, n, [&](int64_t n0, int64_t n1) { columns(x, ldx, q, w.scales, bias, y, ldy, m, k, n0, n1); },
      kPanelColumns);
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
