// The register tile over a float32 or f16 panel ([len][32]: for each input, the 32 outputs'
// weights), in the variant's vectors (weight_vectors.h): linear_row_panels runs it over float32
// and f16 layers held in panels, and linear_paired over a bf16 panel it has widened once for many
// rows. Included by a
// kernel source INSIDE its ISA region, after row_tiles.h and weight_vectors.h.
//
// Every y element is linear_typed's float32 chain, whatever the rows of the tile:
//   acc = bias (or 0) on the call's first pass, else y (a stored float reloads unchanged);
//   acc = fma(x[i], W[i][j], acc) for each input of the pass in order; y = acc.
#pragma once

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

// Rows per register tile: R·kFloatPanelVectors accumulators, the weight vectors and an x
// broadcast fit the register file (32 vectors with AVX-512, 16 with AVX2; the generic variant is
// for tests). With AVX2, 3 rows (12 accumulators) against 2: on a Zen 5 running the avx2 variant,
// 128 rows of float32 panels reached 89-92 % of the FMA peak against 54-56 %, one row 1.00-1.08x
// the weights' stream against 1.10-1.72x (eagerlm-bench-linear --isa avx2 --types f32p).
#if defined(EAGERLM_CPU_HAS_AVX512)
constexpr int kPanelTileRows = 8;
#elif defined(EAGERLM_CPU_HAS_AVX2)
constexpr int kPanelTileRows = 3;
#else
constexpr int kPanelTileRows = 1;
#endif

// Vectors across one panel's 32 outputs.
constexpr int kFloatPanelVectors = int(kPanelColumns) / simd::kLanes;
static_assert(kFloatPanelVectors * simd::kLanes == kPanelColumns);

// Lanes of vector c that hold one of the panel's first `cols` outputs.
inline int panel_lanes_of(int c, int64_t cols) {
  return int(std::clamp<int64_t>(cols - c * simd::kLanes, 0, simd::kLanes));
}

// One input into a tile's sums: sum[r][c] = fma(x[r·ldx], W vector c, sum[r][c]) for each row
// and each of the input's weight vectors, loaded (widened exactly from T) from `weights`, the
// input's 32 weights in its panel.
template <WeightType T, int R>
inline void panel_input_fma(simd::VecF (&sum)[R][kFloatPanelVectors], const float* x, int64_t ldx,
                            const simd::Storage<T>* weights) {
  simd::VecF wv[kFloatPanelVectors];
#pragma GCC unroll 8
  for (int c = 0; c < kFloatPanelVectors; ++c) wv[c] = simd::load<T>(weights + c * simd::kLanes);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const simd::VecF xv = simd::splat(x[r * ldx]);
#pragma GCC unroll 8
    for (int c = 0; c < kFloatPanelVectors; ++c) sum[r][c] = simd::fma(xv, wv[c], sum[r][c]);
  }
}

// A tile's accumulators start from the bias (or zero) on the call's first pass over the inputs,
// else from what the last pass stored in y (a stored float reloads unchanged: the chain goes on);
// lanes past the panel's first `cols` outputs start at zero, and are never stored.
template <int R>
inline void start_panel_tile(simd::VecF (&acc)[R][kFloatPanelVectors], const float* bias, bool first, const float* y,
                             int64_t ldy, int64_t cols) {
#pragma GCC unroll 8
  for (int c = 0; c < kFloatPanelVectors; ++c) {
    const int lanes = panel_lanes_of(c, cols);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      acc[r][c] = !first ? simd::load_floats(y + r * ldy + c * simd::kLanes, lanes)
                  : bias ? simd::load_floats(bias + c * simd::kLanes, lanes)
                         : simd::zero();
  }
}
template <int R>
inline void store_panel_tile(const simd::VecF (&acc)[R][kFloatPanelVectors], float* y, int64_t ldy, int64_t cols) {
#pragma GCC unroll 8
  for (int c = 0; c < kFloatPanelVectors; ++c) {
    const int lanes = panel_lanes_of(c, cols);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) simd::store(y + r * ldy + c * simd::kLanes, acc[r][c], lanes);
  }
}

// Rows [0, R) of y, the panel's first `cols` outputs (1-32; past them the panel holds padding,
// computed and not stored), over the pass's `len` inputs (x and panel start at its first input),
// the panel's weights stored as T (f32 or f16, widened exactly as each is loaded).
// kFromMemory: the panel streams from memory (prefetched ahead, row_tiles.h), not from a widened
// copy in L1/L2.
template <WeightType T, int R, bool kFromMemory>
void float_panel_tile(const float* x, int64_t ldx, const simd::Storage<T>* panel, int64_t len, const float* bias,
                      bool first, float* y, int64_t ldy, int64_t cols) {
  // An input's 32 weights: two cache lines in float32, one in f16.
  constexpr int64_t kLinesPerInput = int64_t(kPanelColumns * sizeof(simd::Storage<T>)) / 64;
  static_assert(kLinesPerInput >= 1);
  simd::VecF acc[R][kFloatPanelVectors];
  start_panel_tile<R>(acc, bias, first, y, ldy, cols);
  for (int64_t i = 0; i < len; ++i) {
    const simd::Storage<T>* row = panel + i * kPanelColumns;
    if constexpr (kFromMemory) {
#pragma GCC unroll 2
      for (int64_t line = 0; line < kLinesPerInput; ++line)
        prefetch_panel_ahead(row + line * kPanelColumns / kLinesPerInput);
    }
    panel_input_fma<T, R>(acc, x + i, ldx, row);
  }
  store_panel_tile<R>(acc, y, ldy, cols);
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA
