// linear_transposed_typed: y = x·Wᵀ with W output-major [n, k] stored as f32, bf16, f16 or int8
// (weights.h): the tied output head, n = the vocabulary. Float32 activations and accumulation
// (linear.cpp's linear_transposed is this kernel with float32 W).
//
// Each y element is a dot product of a W row with an x row, always summed the same way, which
// makes a row's logits independent of the batch around it (batch invariance): kAcc vector
// accumulators of kLanes lanes each, input i going to lane i mod kLanes of accumulator
// (i / kLanes) mod kAcc while whole groups of kAcc vectors remain, the remaining whole vectors and
// the zero-padded partial one to accumulator 0, each by fma in order of i; then the accumulators
// are added in order and the lanes by reduce_add's fixed tree. int8: each widened weight vector is
// first multiplied by its row's block scale (one rounding). None of this depends on m, on the
// tile shape, on the columns a thread gets or on the thread count.
//
// A register tile is J rows of W by R rows of x over the whole of k: each W vector is widened once
// and multiplied with all R x rows, so W streams from memory once for all rows, and a slice of W
// rows stays in L2 for the next group of x rows. For decode (one or two x rows) J = 1:
// the rows of W are consecutive in memory, so W is read as one sequential stream. More than
// kBlockRows rows of x are taken kBlockRows at a time (W streams once per block; the block's x
// rows stay in L2). W rows (y columns) are split across the OpenMP threads (column_split.h).

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

// Accumulators per dot product: two FMA chains in flight even for a single row of x and of W.
constexpr int kAcc = 2;
// Rows of x per block of the prefill regime (kBlockRows·k floats of x in L2), and the rows of x
// below which the kBf16 GEMM is not used.
constexpr int64_t kBlockRows = 64;
constexpr int64_t kFewRows = 16;
// Bytes of W per slice when several groups of x rows pass over it: L2-resident, a multiple of 12
// rows so that tiles of 1 to 4 W rows divide it. 768x50257 head, two Zen 5 threads, 8 rows of x
// (medians of 7): 64 KiB slices 4.0 ms f16, 5.8 f32, 2.7 int8 against 5.6, 8.6, 3.9 with
// L1-sized (16 KiB) ones.
constexpr int64_t kSliceBytes = 64 << 10;

// x rows per tile, and W rows per tile where several are used (rows_against): R·J·kAcc
// accumulators, J weight vectors and an x vector must fit the register file (32 vectors with
// AVX-512, 16 otherwise).
#if defined(EAGERLM_CPU_HAS_AVX512)
constexpr int kTileRows = 8;
// Past one_group_rows rows of x, groups of 4 x rows by 3 W rows: 7 vector loads per 12 FMAs
// against 9 per 8 with 8 x rows by 1, which left the head load-bound. The 768x50257 head, two
// Zen 5 threads, medians of 7: 8 rows 4.1-4.3 ms f16/bf16 and 6.8 f32 as two groups of 4, against
// 5.5-7.1 and 9.8 as one group of 8. float32 W at 5-6 rows is the exception (5.3-5.9 ms as one
// group, 6.7-7.3 as two).
constexpr int kManyTileRows = 4;
template <WeightType T>
constexpr int64_t one_group_rows = T == WeightType::kF32 ? 6 : 4;
constexpr int tile_w_rows(int rows) { return rows <= 2 ? 1 : rows == 3 ? 4 : rows == 4 ? 3 : rows <= 6 ? 2 : 1; }
#else
constexpr int kTileRows = 4;
constexpr int kManyTileRows = 4;
template <WeightType T>
constexpr int64_t one_group_rows = 4;
constexpr int tile_w_rows(int rows) { return rows == 3 ? 2 : 1; }
#endif

// x as the tiles read it: a group of R rows packed vector by vector, [ceil(k / kLanes)][R][kLanes]
// with the last vector zero-padded (pack_rows), so the R row vectors of one step sit at constant
// offsets from one pointer. With R row pointers instead (8 rows: 8 of the 16 general registers)
// GCC spilled them and reloaded an address before each FMA (the 8-row int8 head: 3.5x one row).
struct Operands {
  const float* xp;  // packed x of the current group
  const void* w;
  const float* scales;
  float* y;
  int64_t ldy;
  int64_t k;
};

int64_t vectors_of(int64_t k) { return (k + kLanes - 1) / kLanes; }

// Rows [0, rows) of x (stride ldx, k inputs) into `out` in the packed layout above. The zero lanes
// meet W's zero lanes of load_partial, as the unpacked partial loads did: the same arithmetic.
void pack_rows(const float* x, int64_t ldx, int rows, int64_t k, float* out) {
  for (int64_t v = 0; v < vectors_of(k); ++v) {
    const int64_t i = v * kLanes, count = std::min<int64_t>(kLanes, k - i);
    for (int r = 0; r < rows; ++r) {
      float* dst = out + (v * rows + r) * kLanes;
      std::copy_n(x + r * ldx + i, count, dst);
      std::fill(dst + count, dst + kLanes, 0.0f);
    }
  }
}

// How far ahead of its reads a tile prefetches W (0: left to the hardware). Measured on the
// 768x50257 head, two Zen 4 threads: int8 26.5 GB/s with 1 KiB against 24.0 without; f32 and
// bf16 gain nothing (31 and 28 GB/s).
template <WeightType T>
constexpr int64_t kPrefetchBytes = T == WeightType::kInt8 ? 1024 : 0;

// y[r][j + jj] = x[r, :] · W[j + jj, :] for r < R, jj < J, summed as the chain above.
template <WeightType T, int R, int J>
inline void tile(const Operands& o, int64_t j) {
  using S = simd::Storage<T>;
  const S* w = static_cast<const S*>(o.w) + j * o.k;
  const int64_t blocks = o.k / kInt8Block;
  const float* scales[J];
#pragma GCC unroll 8
  for (int jj = 0; jj < J; ++jj) scales[jj] = T == WeightType::kInt8 ? o.scales + (j + jj) * blocks : nullptr;
  VecF acc[R][J][kAcc];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int jj = 0; jj < J; ++jj) {
#pragma GCC unroll 4
      for (int a = 0; a < kAcc; ++a) acc[r][jj][a] = simd::zero();
    }
  }
  // kLanes inputs from i (only `count` of them when kPartial) into accumulator a: each W vector
  // is widened once and multiplied into every x row. int8 k is whole blocks of whole vectors.
  auto step = [&]<bool kPartial>(int a, int64_t i, int count) {
    VecF wv[J];
#pragma GCC unroll 8
    for (int jj = 0; jj < J; ++jj) {
      const S* p = w + jj * o.k + i;
      if constexpr (kPrefetchBytes < T >> 0) {
        if ((i * int64_t(sizeof(S))) % 64 == 0)
          __builtin_prefetch(reinterpret_cast<const char*>(p) + kPrefetchBytes<T>);
      }
      wv[jj] = kPartial ? simd::load_partial<T>(p, count) : simd::load<T>(p);
      if constexpr (T == WeightType::kInt8) wv[jj] = wv[jj] * simd::splat(scales[jj][i / kInt8Block]);
    }
    const float* xs = o.xp + (i / kLanes) * R * kLanes;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      VecF xv = simd::load<WeightType::kF32>(xs + r * kLanes);
      if constexpr (J > 1) simd::keep_in_register(xv);
#pragma GCC unroll 8
      for (int jj = 0; jj < J; ++jj) acc[r][jj][a] = simd::fma(xv, wv[jj], acc[r][jj][a]);
    }
  };
  int64_t i = 0;
  for (; i + kAcc * kLanes <= o.k; i += kAcc * kLanes) {
#pragma GCC unroll 4
    for (int a = 0; a < kAcc; ++a) step.template operator()<false>(a, i + a * kLanes, kLanes);
  }
  for (; i + kLanes <= o.k; i += kLanes) step.template operator()<false>(0, i, kLanes);
  if (i < o.k) step.template operator()<true>(0, i, int(o.k - i));
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int jj = 0; jj < J; ++jj) {
      VecF sum = acc[r][jj][0];
#pragma GCC unroll 4
      for (int a = 1; a < kAcc; ++a) sum += acc[r][jj][a];
      o.y[r * o.ldy + j + jj] = simd::reduce_add(sum);
    }
  }
}

// W rows [n0, n1) against R rows of x. One W row at a time for up to 2 x rows: the rows of W are
// consecutive, so W is then read as one sequential stream (768x50257 bf16, one thread: 3.3 ms
// against 6.8-7.3 ms with 2-8 rows interleaved). With more x rows the work per weight hides the
// interleaving and a few W rows per tile save x loads (8 rows of bf16: 10.6 ms with 4 W rows,
// 11.9 with one; int8 on Zen 5, 4 rows: 1.7 ms with 3 W rows, 2.1 with one). Each x vector is then
// held in a register for its J FMAs (keep_in_register): 8 rows of the bf16 head 6.3 ms against
// 7.6 with GCC's memory operands.
template <WeightType T, int R>
void rows_against(const Operands& o, int64_t n0, int64_t n1) {
  constexpr int J = tile_w_rows(R);
  int64_t j = n0;
  for (; j + J <= n1; j += J) tile<T, R, J>(o, j);
  for (; j < n1; ++j) tile<T, R, 1>(o, j);
}

template <WeightType T>
void group(const Operands& o, int rows, int64_t n0, int64_t n1) {
  static_assert(kTileRows == 4 || kTileRows == 8);
  switch (rows) {
    case 1: return rows_against<T, 1>(o, n0, n1);
    case 2: return rows_against<T, 2>(o, n0, n1);
    case 3: return rows_against<T, 3>(o, n0, n1);
    case 4: return rows_against<T, 4>(o, n0, n1);
  }
  if constexpr (kTileRows == 8) {
    switch (rows) {
      case 5: return rows_against<T, 5>(o, n0, n1);
      case 6: return rows_against<T, 6>(o, n0, n1);
      case 7: return rows_against<T, 7>(o, n0, n1);
      case 8: return rows_against<T, 8>(o, n0, n1);
    }
  }
}

// W rows [n0, n1) against m <= kBlockRows x rows, in slices (kSliceBytes) that stay in L2 while
// every group of x rows (one group up to one_group_rows, else near-equal groups of at most
// kManyTileRows) passes over them. Each group's rows are packed first (m·k floats in all, in this
// thread's scratch: small beside the n·k weights every call streams).
template <WeightType T>
void row_block(Operands o, const float* x, int64_t ldx, int64_t m, int64_t n0, int64_t n1) {
  static_assert(kManyTileRows <= kTileRows);
  const int64_t rows_per_group = m > one_group_rows<T> ? kManyTileRows : kTileRows;
  const int64_t groups = (m + rows_per_group - 1) / rows_per_group;
  int64_t first_row[kBlockRows / kManyTileRows + 1] = {0};  // group g: rows [first_row[g], first_row[g + 1])
  for (int64_t g = 0; g < groups; ++g) first_row[g + 1] = first_row[g] + (m - first_row[g]) / (groups - g);
  const int64_t group_floats = vectors_of(o.k) * kLanes;  // per row of a group
  thread_local std::vector<float> packed;
  if (packed.size() < size_t(m * group_floats)) packed.resize(size_t(m * group_floats));
  for (int64_t g = 0; g < groups; ++g)
    pack_rows(x + first_row[g] * ldx, ldx, int(first_row[g + 1] - first_row[g]), o.k,
              packed.data() + first_row[g] * group_floats);
  const int64_t slice =
      groups == 1 ? n1 - n0 : std::max<int64_t>(12, kSliceBytes / (o.k * int64_t(weight_element_size(T))) / 12 * 12);
  for (int64_t j0 = n0; j0 < n1; j0 += slice) {
    const int64_t j1 = std::min(n1, j0 + slice);
    for (int64_t g = 0; g < groups; ++g) {
      Operands og = o;
      og.xp = packed.data() + first_row[g] * group_floats;
      og.y += first_row[g] * o.ldy;
      group<T>(og, int(first_row[g + 1] - first_row[g]), j0, j1);
    }
  }
}

template <WeightType T>
void run(const float* x, int64_t ldx, const Weights& w, float* y, int64_t ldy, int64_t m, int64_t k, int64_t n,
         GemmMath math) {
  const Operands o{nullptr, w.data, w.scales, y, ldy, k};
  detail::split_columns(m, k, n, [&](int64_t n0, int64_t n1) {
#if defined(EAGERLM_CPU_HAS_AVX512BF16)
    if (T == WeightType::kBF16 && math == GemmMath::kBf16 && bf16_gemm_takes(m, kFewRows, false, k)) {
      // Not batch-invariant: these rows round x to bf16, fewer rows keep float32 (cpu_kernels.inc).
      gemm_bf16(x, ldx, static_cast<const uint16_t*>(w.data), false, nullptr, y, ldy, m, k, n, n0, n1);
      return;
    }
#endif
    for (int64_t r0 = 0; r0 < m; r0 += kBlockRows) {
      Operands ob = o;
      ob.y += r0 * ldy;
      row_block<T>(ob, x + r0 * ldx, ldx, std::min(kBlockRows, m - r0), n0, n1);
    }
  });
  (void)math;
}

}  // namespace

void linear_transposed_typed(const float* x, int64_t ldx, const Weights& w, float* y, int64_t ldy, int64_t m, int64_t k,
                             int64_t n, GemmMath math) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {  // an empty sum
    for (int64_t r = 0; r < m; ++r) std::fill(y + r * ldy, y + r * ldy + n, 0.0f);
    return;
  }
  switch (w.type) {
    case WeightType::kF32: return run<WeightType::kF32>(x, ldx, w, y, ldy, m, k, n, math);
    case WeightType::kBF16: return run<WeightType::kBF16>(x, ldx, w, y, ldy, m, k, n, math);
    case WeightType::kF16: return run<WeightType::kF16>(x, ldx, w, y, ldy, m, k, n, math);
    case WeightType::kInt8: return run<WeightType::kInt8>(x, ldx, w, y, ldy, m, k, n, math);
  }
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
