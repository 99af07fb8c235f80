// quantize_int8: float32 weights to symmetric int8 with one scale per block of kInt8Block
// inputs of one output (weights.h): s = max|w| / 127 over the block, q = round(w / s) to nearest
// even, so |w - s·q| <= s/2 (plus the rounding of w / s); an all-zero block gets s = 0, q = 0.
// Blocks are independent; they are split over the OpenMP threads. Vector loops, the same
// arithmetic in every variant (rounding by the 1.5·2^23 trick, no library call), so all
// variants give identical bytes. Weights are finite (the caller checks); a NaN quantizes to 0.
#include <cmath>

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/parallel.h"

#include "kernels/cpu/isa_begin.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

namespace {

// Rounds to the nearest integer, ties to even, for |v| <= 2^22 (here |v| <= ~127).
inline float round_even(float v) {
  constexpr float kMagic = 12582912.0f;  // 1.5·2^23
  return v >= 0.0f ? (v + kMagic) - kMagic : -((-v + kMagic) - kMagic);
}

// q = round(w / s), clamped to [-127, 127]; s == 0 gives 0 (and so does a NaN).
inline int8_t quantize(float w, float s) {
  const float v = s == 0.0f ? 0.0f : round_even(w / s);
  return int8_t(v > 127.0f ? 127.0f : v < -127.0f ? -127.0f : v == v ? v : 0.0f);
}

// Input-major: block b of w [rows, cols] is rows [32b, 32b + 32) of every column.
void quantize_block_rows(const float* w, int64_t cols, int64_t b, int8_t* q, float* scales) {
  const float* block = w + b * kInt8Block * cols;
  int8_t* qb = q + b * kInt8Block * cols;
  float* s = scales + b * cols;
#pragma omp simd
  for (int64_t j = 0; j < cols; ++j) s[j] = 0.0f;
  for (int64_t i = 0; i < kInt8Block; ++i) {
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) {
      const float a = std::fabs(block[i * cols + j]);
      s[j] = a > s[j] ? a : s[j];
    }
  }
#pragma omp simd
  for (int64_t j = 0; j < cols; ++j) s[j] = s[j] / 127.0f;
  for (int64_t i = 0; i < kInt8Block; ++i) {
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) qb[i * cols + j] = quantize(block[i * cols + j], s[j]);
  }
}

// Output-major: row r of w [rows, cols], blocks of 32 consecutive entries.
void quantize_row(const float* w, int64_t cols, int64_t r, int8_t* q, float* scales) {
  for (int64_t b = 0; b < cols / kInt8Block; ++b) {
    const float* block = w + r * cols + b * kInt8Block;
    float amax = 0.0f;
#pragma omp simd reduction(max : amax)
    for (int64_t i = 0; i < kInt8Block; ++i) {
      const float a = std::fabs(block[i]);
      amax = a > amax ? a : amax;
    }
    const float s = amax / 127.0f;
    scales[r * (cols / kInt8Block) + b] = s;
    int8_t* qb = q + r * cols + b * kInt8Block;
#pragma omp simd
    for (int64_t i = 0; i < kInt8Block; ++i) qb[i] = quantize(block[i], s);
  }
}

}  // namespace

void quantize_int8(const float* w, int64_t rows, int64_t cols, bool input_major, int8_t* q, float* scales) {
  if (rows <= 0 || cols <= 0) return;
  const int threads = threads_for(rows * cols);
  if (input_major) {
    const int64_t blocks = rows / kInt8Block;
    parallel_ranges(
        blocks,
        [&](int64_t b0, int64_t b1) {
          for (int64_t b = b0; b < b1; ++b) quantize_block_rows(w, cols, b, q, scales);
        },
        1, threads);
  } else {
    parallel_ranges(
        rows,
        [&](int64_t r0, int64_t r1) {
          for (int64_t r = r0; r < r1; ++r) quantize_row(w, cols, r, q, scales);
        },
        1, threads);
  }
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
