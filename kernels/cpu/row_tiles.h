// Register tiles of a compile-time number of rows, for the kernels that stream W once for up to 8
// rows of x (linear_row_panels, linear_paired, linear_int8_panels): `with_rows` turns a run-time
// row count into the template argument of a tile, so that each tile's accumulators are plain
// registers, and `for_each_row_tile` runs a kernel's rows through tiles of one height; how far
// ahead a tile prefetches its panel; and the passes over the inputs that keep a tile's rows of x
// in L1, with their per-thread scratch.
// Included by a kernel source INSIDE its ISA region (after isa_begin.h), as weight_vectors.h is;
// <algorithm>, <type_traits> and <vector> must be included before the region.
#pragma once

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

// Calls f(std::integral_constant<int, R>()) for R = rows, 1 <= rows <= kMaxRows <= 8.
template <int kMaxRows, typename F>
void with_rows(int rows, F&& f) {
  static_assert(kMaxRows >= 1 && kMaxRows <= 8);
  auto tile = [&](auto r) {
    if constexpr (r() <= kMaxRows) f(r);
  };
  switch (rows) {
    case 1: return tile(std::integral_constant<int, 1>());
    case 2: return tile(std::integral_constant<int, 2>());
    case 3: return tile(std::integral_constant<int, 3>());
    case 4: return tile(std::integral_constant<int, 4>());
    case 5: return tile(std::integral_constant<int, 5>());
    case 6: return tile(std::integral_constant<int, 6>());
    case 7: return tile(std::integral_constant<int, 7>());
    case 8: return tile(std::integral_constant<int, 8>());
  }
}

// Rows [0, m) in register tiles of kTileRows (the last one shorter): f(r0, rows), rows as
// with_rows gives it.
template <int kTileRows, typename F>
void for_each_row_tile(int64_t m, F&& f) {
  for (int64_t r0 = 0; r0 < m; r0 += kTileRows)
    with_rows<kTileRows>(int(std::min<int64_t>(kTileRows, m - r0)), [&](auto rows) { f(r0, rows); });
}

// How far ahead of its reads a tile prefetches its panel. A panel is one sequential stream, but a
// tile of several rows reads it at a fraction of the memory's speed, and the hardware prefetchers
// then run too little ahead of it: on a Zen 5, a loop of 8 rows × 32 int8 columns (16 FMAs an
// input) took 17 cycles an input with its weights from memory against 8 from L1; prefetching 1 KiB
// ahead 11.1, 2 KiB 9.4, 4 KiB 8.2, 8 KiB 8.2.
constexpr int64_t kPanelPrefetchBytes = 4 << 10;
inline void prefetch_panel_ahead(const void* read) {
  __builtin_prefetch(static_cast<const char*>(read) + kPanelPrefetchBytes);
}

// Inputs per pass over the panels for register tiles of `tile_rows` rows of float32 x, a
// multiple of `unit`: each pass runs over every panel of the call's columns, carrying y between
// passes (exactly), so that the tile's rows of x for one pass stay in L1 while the panels stream
// past; the whole of k where it fits (one row). Zen 4 (32 KiB L1), 2 threads, eagerlm-bench-linear
// at 8 rows, GPT-2 124M's products of one step (12 layers and the head), medians of 3 runs
// alternating: bf16 panels 14.6 ms in passes of 24 KiB of x, 15.9 in one pass, 18.4 in passes of
// 16 KiB; f16 14.6 / 16.9 / 19.5; int8 13.5 / 14.3 / 17.2. (Under bf16 math, a pair of inputs
// one word, one pass was fastest: 8.7 ms against 10.2.)
inline int64_t inputs_per_pass(int64_t tile_rows, int64_t k, int64_t unit) {
  constexpr int64_t kPassBytes = 24 << 10;  // of x's float32 rows
  const int64_t fit = kPassBytes / int64_t(sizeof(float)) / tile_rows / 64 * 64;
  const int64_t pass = std::max<int64_t>(fit, 64) / unit * unit;
  return pass >= k ? k : pass;
}

// Up to this many rows, tiles over a 16-bit panel widen each weight vector as they load it, once
// per tile; past it, a pass's part of the panel is widened to float32 once and every tile reads
// that copy from L1/L2 (linear_row_panels for f16, linear_paired for bf16 under fp32 math).
// Widening costs a store and a reload of twice the bytes, converting in each tile a conversion
// per tile: the avx2 variant's f16 panels on a Zen 3, eagerlm-bench-linear --types f16p, the
// output head at 4 rows 3.7-4.0 ms converting in tiles against 5.2-5.4 widened, 8 rows 6.6-7.5
// against 7.1-11.3, 12 rows 11.1 against 7.9-9.0; at 128 rows widening once ran 89 % of the FMA
// peak against 46 % (a Zen 5). With AVX-512 a tile holds 8 rows already.
constexpr int64_t kWidenPastRows = 8;

// A pass's inputs of every row are copied into scratch whose rows are not a multiple of 4 KiB
// apart: rows of x 12 KiB apart (3072 inputs) all fall into the same L1 sets, where the stream of
// W evicts them. The stride of the copy of `pass` inputs, and the copy (x[r][0, len) to
// xs[r·ldxs + ...], r < m).
inline int64_t copied_x_stride(int64_t pass) { return pass + 16; }
inline void copy_x(const float* x, int64_t ldx, int64_t m, int64_t len, float* xs, int64_t ldxs) {
  for (int64_t r = 0; r < m; ++r) std::copy(x + r * ldx, x + r * ldx + len, xs + r * ldxs);
}

// The calling thread's scratch for passes of `pass` inputs over m rows: the copy of x (stride
// ldp), and where `widen` a pass's part of one panel widened to float32 ([pass][32]). Grown as
// needed and kept for the thread's next call.
struct PassScratch {
  float* xs;
  int64_t ldp;
  float* wide;
};
inline PassScratch pass_scratch(int64_t m, int64_t pass, bool widen) {
  thread_local std::vector<float> xs, wide;
  const int64_t ldp = copied_x_stride(pass);
  if (xs.size() < size_t(m * ldp)) xs.resize(size_t(m * ldp));
  if (widen && wide.size() < size_t(pass * kPanelColumns)) wide.resize(size_t(pass * kPanelColumns));
  return {xs.data(), ldp, wide.data()};
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA
