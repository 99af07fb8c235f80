// linear_row_panels (cpu_kernels.inc): y = x·W + bias with float32 or f16 W held in row panels
// (weights.h: [⌈n/32⌉][k][32], the last panel zero-padded), the layout the CPU backend holds
// float32 and f16 layers and a copy of the output head in where the variant has AVX2 or AVX-512
// (engine/core/cpu_backend.cpp).
//
// Why: linear_typed reads input-major W [k, n] a chunk of rows at a time, one stream per row at a
// stride of n elements; at one row of x a float32 decode step then read at 52-59 GB/s on a Zen 5
// whose probe read 84 (docs/benchmarks.md), and 8 rows at 21-41. A panel is one sequential
// stream; a register tile of up to kPanelTileRows rows × 32 outputs reads each weight vector once
// for all its rows (float_panel_tile.h), f16 widened by the load itself (vcvtph2ps from memory).
// f16 held in bf16's paired panels had to split each word's halves first: on the avx2 variant
// that shuffling made 8 rows slower than input-major (docs/benchmarks.md).
//
// Every y element is linear_typed's float32 chain (float_panel_tile.h), whatever m, the row's
// place and the columns a thread gets: the layout changes no bits, and a row gives the same bits
// alone or in a batch. The inputs are taken in passes that keep a tile's rows of x in L1
// (row_tiles.h), y carrying the chain between them.
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

// An f16 panel's part widened once into float32 ([len][32]), for calls of more than
// kWidenPastRows rows (row_tiles.h): each tile would otherwise convert every weight again, and
// converting, not multiplying, then bounds the tiles (the avx2 variant on a Zen 5: 46 % of the FMA
// peak at 128 rows against 89 %).
void widen_panel(const uint16_t* panel, int64_t len, float* wide) {
  for (int64_t i = 0; i < len; ++i) {
    prefetch_panel_ahead(panel + i * kPanelColumns);
#pragma GCC unroll 8
    for (int c = 0; c < kFloatPanelVectors; ++c)
      simd::store(wide + i * kPanelColumns + c * simd::kLanes,
                  simd::load<WeightType::kF16>(panel + i * kPanelColumns + c * simd::kLanes), simd::kLanes);
  }
}

// Columns [n0, n1) (n0 at a panel's start): passes over the inputs, in each pass panel by panel,
// each panel's rows in tiles of kPanelTileRows (the panel's part stays in L1/L2 for the next tile
// of rows).
template <WeightType T>
void columns(const float* x, int64_t ldx, const simd::Storage<T>* w, const float* bias, float* y, int64_t ldy,
             int64_t m, int64_t k, int64_t n0, int64_t n1) {
  const bool widen_once = T == WeightType::kF16 && m > kWidenPastRows;
  const int64_t pass = inputs_per_pass(std::min<int64_t>(m, kPanelTileRows), k, 1);
  const PassScratch s = pass_scratch(m, pass, widen_once);
  for (int64_t i0 = 0; i0 < k; i0 += pass) {
    const int64_t len = std::min(pass, k - i0);
    copy_x(x + i0, ldx, m, len, s.xs, s.ldp);
    for (int64_t j0 = n0; j0 < n1; j0 += kPanelColumns) {
      const simd::Storage<T>* panel = w + j0 * k + i0 * kPanelColumns;
      const int64_t cols = std::min(kPanelColumns, n1 - j0);
      const float* b = bias ? bias + j0 : nullptr;
      if constexpr (T == WeightType::kF16) {
        if (widen_once) widen_panel(panel, len, s.wide);
      }
      for_each_row_tile<kPanelTileRows>(m, [&](int64_t r0, auto rows) {
        const float* xt = s.xs + r0 * s.ldp;
        float* yt = y + r0 * ldy + j0;
        if (widen_once) {
          float_panel_tile<WeightType::kF32, rows(), false>(xt, s.ldp, s.wide, len, b, i0 == 0, yt, ldy, cols);
        } else {
          float_panel_tile<T, rows(), true>(xt, s.ldp, panel, len, b, i0 == 0, yt, ldy, cols);
        }
      });
    }
  }
}

}  // namespace

void linear_row_panels(const float* x, int64_t ldx, const Weights& w, const float* bias, float* y, int64_t ldy,
                       int64_t m, int64_t k, int64_t n) {
  if (m == 0 || n == 0) return;
  detail::split_columns(
      m, k, n,
      [&](int64_t n0, int64_t n1) {
        if (w.type == WeightType::kF16) {
          columns<WeightType::kF16>(x, ldx, static_cast<const uint16_t*>(w.data), bias, y, ldy, m, k, n0, n1);
        } else {
          columns<WeightType::kF32>(x, ldx, static_cast<const float*>(w.data), bias, y, ldy, m, k, n0, n1);
        }
      },
      kPanelColumns);
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
