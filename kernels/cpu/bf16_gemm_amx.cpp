// The AMX engine of gemm_bf16 (bf16_gemm.h): TDPBF16PS multiplies a 16 × 32 tile of bf16 x by a
// 32 × 16 tile of bf16 W (held as 16 × 16 words, each word a pair of consecutive inputs, the
// layout bf16_gemm.cpp already packs for vdpbf16ps) into a 16 × 16 float32 tile: 16 times the
// multiply-adds of a float32 vector FMA per instruction. A block of 32 rows × 32 columns keeps
// four accumulator tiles, two x tiles and two W tiles in the eight tile registers, so each W tile
// loaded serves 32 rows and each x tile 32 columns.
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cstdint>
#include <cstring>

#include "kernels/cpu/cpu_ops.h"

#include "kernels/cpu/isa_begin.h"

// Before the declarations, so that GCC does not take these definitions for AMX-only versions of
// functions declared without it (versions get their own symbol names).
#if defined(EAGERLM_CPU_HAS_AVX512BF16) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC target("amx-tile,amx-bf16")
#endif

#include "kernels/cpu/bf16_gemm.h"

#if defined(EAGERLM_CPU_HAS_AMX_GEMM)

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

namespace {

// The LDTILECFG operand: palette 1, then bytes per row and rows of each of the 16 tiles; tiles 0-7
// all 16 rows of 64 bytes. A constant in memory: GCC treats the stores of a local operand as dead
// (it does not see LDTILECFG read them).
struct alignas(64) TileConfig {
  uint8_t palette, start_row;
  uint8_t reserved[14];
  uint16_t bytes_per_row[16];
  uint8_t rows[16];
};
constexpr TileConfig kTileConfig = {1, 0, {}, {64, 64, 64, 64, 64, 64, 64, 64}, {16, 16, 16, 16, 16, 16, 16, 16}};

// Tiles 0-3 accumulate C (rows r, r + 16 × columns c, c + 16), 4-5 hold x, 6-7 hold W.
template <int RowTiles, int ColTiles>
inline void tile_block(const uint32_t* xp, int64_t ldxp, const uint32_t* bp, int64_t ldbp, float* c, int64_t ldc,
                       int64_t pairs, bool first) {
  const int64_t x_stride = ldxp * 4, w_stride = ldbp * 4, c_stride = ldc * 4;
  if (first) {
    _tile_zero(0);
    if constexpr (ColTiles > 1) _tile_zero(1);
    if constexpr (RowTiles > 1) _tile_zero(2);
    if constexpr (RowTiles > 1 && ColTiles > 1) _tile_zero(3);
  } else {
    _tile_loadd(0, c, c_stride);
    if constexpr (ColTiles > 1) _tile_loadd(1, c + 16, c_stride);
    if constexpr (RowTiles > 1) _tile_loadd(2, c + 16 * ldc, c_stride);
    if constexpr (RowTiles > 1 && ColTiles > 1) _tile_loadd(3, c + 16 * ldc + 16, c_stride);
  }
  for (int64_t p = 0; p < pairs; p += 16) {
    _tile_loadd(4, xp + p, x_stride);
    _tile_loadd(6, bp + p * ldbp, w_stride);
    if constexpr (ColTiles > 1) _tile_loadd(7, bp + p * ldbp + 16, w_stride);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (ColTiles > 1) _tile_dpbf16ps(1, 4, 7);
    if constexpr (RowTiles > 1) {
      _tile_loadd(5, xp + 16 * ldxp + p, x_stride);
      _tile_dpbf16ps(2, 5, 6);
      if constexpr (ColTiles > 1) _tile_dpbf16ps(3, 5, 7);
    }
  }
  _tile_stored(0, c, c_stride);
  if constexpr (ColTiles > 1) _tile_stored(1, c + 16, c_stride);
  if constexpr (RowTiles > 1) _tile_stored(2, c + 16 * ldc, c_stride);
  if constexpr (RowTiles > 1 && ColTiles > 1) _tile_stored(3, c + 16 * ldc + 16, c_stride);
}

// y^T for 16 W rows in tile 0; W's tile and x's alternate between 4/6 and 5/7 from one 32 inputs
// to the next, so that a load overlaps the product before it.
inline void rows_tile(const uint16_t* w, int64_t ldw, const uint32_t* xt, int64_t ldxt, int64_t pairs, float* out) {
  const int64_t w_stride = ldw * 2, x_stride = ldxt * 4;
  _tile_zero(0);
  int64_t p = 0;
  for (; p + 32 <= pairs; p += 32) {
    _tile_loadd(4, w + 2 * p, w_stride);
    _tile_loadd(6, xt + p * ldxt, x_stride);
    _tile_dpbf16ps(0, 4, 6);
    _tile_loadd(5, w + 2 * (p + 16), w_stride);
    _tile_loadd(7, xt + (p + 16) * ldxt, x_stride);
    _tile_dpbf16ps(0, 5, 7);
  }
  if (p < pairs) {
    _tile_loadd(4, w + 2 * p, w_stride);
    _tile_loadd(6, xt + p * ldxt, x_stride);
    _tile_dpbf16ps(0, 4, 6);
  }
  _tile_stored(0, out, 64);
}

}  // namespace

void amx_begin() { _tile_loadconfig(&kTileConfig); }

void amx_end() { _tile_release(); }

void amx_block(const uint32_t* xp, int64_t ldxp, const uint32_t* bp, int64_t ldbp, float* c, int64_t ldc, int64_t rows,
               int64_t cols, int64_t pairs, bool first) {
  for (int64_t r = 0; r < rows; r += 32) {
    const bool two_rows = r + 32 <= rows;
    for (int64_t j = 0; j < cols; j += 32) {
      const bool two_cols = j + 32 <= cols;
      const uint32_t* x = xp + r * ldxp;
      const uint32_t* w = bp + j;
      float* out = c + r * ldc + j;
      if (two_rows && two_cols) {
        tile_block<2, 2>(x, ldxp, w, ldbp, out, ldc, pairs, first);
      } else if (two_rows) {
        tile_block<2, 1>(x, ldxp, w, ldbp, out, ldc, pairs, first);
      } else if (two_cols) {
        tile_block<1, 2>(x, ldxp, w, ldbp, out, ldc, pairs, first);
      } else {
        tile_block<1, 1>(x, ldxp, w, ldbp, out, ldc, pairs, first);
      }
    }
  }
}

void amx_rows_tile(const uint16_t* w, int64_t ldw, const uint32_t* xt, int64_t ldxt, int64_t pairs, float* out) {
  rows_tile(w, ldw, xt, ldxt, pairs, out);
}

double amx_probe_flops(int64_t rounds) {
  // Zeros: a tile product's time does not depend on its values.
  alignas(64) static const uint16_t zeros[16 * 32] = {};
  alignas(64) float sink[16 * 16];
  amx_begin();
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, zeros, 64);
  _tile_loadd(5, zeros, 64);
  _tile_loadd(6, zeros, 64);
  _tile_loadd(7, zeros, 64);
  for (int64_t i = 0; i < rounds; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  // The accumulators leave the tiles, so that no product can be dropped as unused.
  _tile_stored(0, sink, 64);
  _tile_stored(1, sink, 64);
  _tile_stored(2, sink, 64);
  _tile_stored(3, sink, 64);
  amx_end();
  const double flops = double(rounds) * 4 * (16 * 16 * 32 * 2);
  return sink[0] == 12345.0f ? -flops : flops;  // zeros never sum to this
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#endif  // EAGERLM_CPU_HAS_AMX_GEMM

#include "kernels/cpu/isa_end.h"
