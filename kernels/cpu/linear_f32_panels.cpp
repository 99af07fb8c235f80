// linear_f32_panels (cpu_kernels.inc): y = x·W + bias with float32 W held in panels (weights.h:
// [⌈n/32⌉][k][32], the last panel zero-padded), the layout the CPU backend holds float32 layers
// and a copy of the output head in where the variant has AVX-512 (engine/core/cpu_backend.cpp).
//
// Why: linear_typed reads input-major W [k, n] a chunk of rows at a time, one stream per row at a
// stride of n floats; at one row of x a float32 decode step then read at 52-59 GB/s on a Zen 5
// whose probe read 84 (docs/benchmarks.md), and 8 rows at 21-41. A panel is one sequential
// stream; a register tile of up to kPanelTileRows rows × 32 outputs reads each weight vector once
// for all its rows (float_panel_tile.h).
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

// Columns [n0, n1) (n0 at a panel's start): passes over the inputs, in each pass panel by panel,
// each panel's rows in tiles of kPanelTileRows (the panel's part stays in L1/L2 for the next tile
// of rows).
void columns(const float* x, int64_t ldx, const float* w, const float* bias, float* y, int64_t ldy, int64_t m,
             int64_t k, int64_t n0, int64_t n1) {
  const int64_t pass = inputs_per_pass(std::min<int64_t>(m, kPanelTileRows), k, 1);
  thread_local std::vector<float> xs;
  const int64_t ldp = copied_x_stride(pass);
  if (xs.size() < size_t(m * ldp)) xs.resize(size_t(m * ldp));
  for (int64_t i0 = 0; i0 < k; i0 += pass) {
    const int64_t len = std::min(pass, k - i0);
    copy_x(x + i0, ldx, m, len, xs.data(), ldp);
    for (int64_t j0 = n0; j0 < n1; j0 += kPanelColumns) {
      const float* panel = w + j0 * k + i0 * kPanelColumns;
      const int64_t cols = std::min(kPanelColumns, n1 - j0);
      const float* b = bias ? bias + j0 : nullptr;
      for (int64_t r0 = 0; r0 < m; r0 += kPanelTileRows)
        with_rows<kPanelTileRows>(int(std::min<int64_t>(kPanelTileRows, m - r0)), [&](auto rows) {
          float_panel_tile<rows(), true>(xs.data() + r0 * ldp, ldp, panel, len, b, i0 == 0, y + r0 * ldy + j0, ldy,
                                         cols);
        });
    }
  }
}

}  // namespace

void linear_f32_panels(const float* x, int64_t ldx, const float* w, const float* bias, float* y, int64_t ldy, int64_t m,
                       int64_t k, int64_t n) {
  if (m == 0 || n == 0) return;
  detail::split_columns(
      m, k, n, [&](int64_t n0, int64_t n1) { columns(x, ldx, w, bias, y, ldy, m, k, n0, n1); }, kPanelColumns);
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
