// Bulk widening of stored weights to float32 (see widen.h): one vector loop per layout, over the
// loads of weight_vectors.h.
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernels/common/dtype.h"
#include "kernels/common/weights.h"
#include "kernels/cpu/cpu_ops.h"

#include "kernels/cpu/isa_begin.h"

#include "kernels/cpu/weight_vectors.h"
#include "kernels/cpu/widen.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

namespace {

using simd::kLanes;
using simd::VecF;

// out[c] = src[c] (· scales[c] for int8, one scale per element) for c < count.
template <WeightType T>
void widen_span(const simd::Storage<T>* src, const float* scales, float* out, int64_t count) {
  int64_t c = 0;
  for (; c + kLanes <= count; c += kLanes) {
    VecF v = simd::load<T>(src + c);
    if constexpr (T == WeightType::kInt8) v = v * simd::load<WeightType::kF32>(scales + c);
    simd::store(out + c, v, kLanes);
  }
  if (c < count) {
    const int rest = int(count - c);
    VecF v = simd::load_partial<T>(src + c, rest);
    if constexpr (T == WeightType::kInt8) v = v * simd::load_partial<WeightType::kF32>(scales + c, rest);
    simd::store(out + c, v, rest);
  }
}

// out[i] = src[i] (· scales[i / kInt8Block] for int8) for i < count, count a multiple of the
// block for int8.
template <WeightType T>
void widen_blocked(const simd::Storage<T>* src, const float* scales, float* out, int64_t count) {
  if constexpr (T == WeightType::kInt8) {
    for (int64_t b = 0; b < count / kInt8Block; ++b) {
      const VecF s = simd::splat(scales[b]);
      for (int64_t c = 0; c < kInt8Block; c += kLanes)
        simd::store(out + b * kInt8Block + c, simd::load<T>(src + b * kInt8Block + c) * s, kLanes);
    }
  } else {
    widen_span<T>(src, nullptr, out, count);
  }
}

template <WeightType T>
void widen_columns_as(const Weights& w, int64_t k, int64_t n, int64_t j0, int64_t cols, float* out) {
  const auto* data = static_cast<const simd::Storage<T>*>(w.data);
  for (int64_t i = 0; i < k; ++i) {
    const float* scales = T == WeightType::kInt8 ? w.scales + (i / kInt8Block) * n + j0 : nullptr;
    widen_span<T>(data + i * n + j0, scales, out + i * cols, cols);
  }
}

template <WeightType T>
void widen_rows_as(const Weights& w, int64_t k, int64_t first_row, const int32_t* rows_index, int64_t rows,
                   float* out) {
  const auto* data = static_cast<const simd::Storage<T>*>(w.data);
  const int64_t blocks = k / kInt8Block;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t row = rows_index ? int64_t(rows_index[r]) : first_row + r;
    const float* scales = T == WeightType::kInt8 ? w.scales + row * blocks : nullptr;
    widen_blocked<T>(data + row * k, scales, out + r * k, k);
  }
}

}  // namespace

void widen_columns(const Weights& w, int64_t k, int64_t n, int64_t j0, int64_t cols, float* out) {
  switch (w.type) {
    case WeightType::kF32: return widen_columns_as<WeightType::kF32>(w, k, n, j0, cols, out);
    case WeightType::kBF16: return widen_columns_as<WeightType::kBF16>(w, k, n, j0, cols, out);
    case WeightType::kF16: return widen_columns_as<WeightType::kF16>(w, k, n, j0, cols, out);
    case WeightType::kInt8: return widen_columns_as<WeightType::kInt8>(w, k, n, j0, cols, out);
  }
}

void widen_rows(const Weights& w, int64_t k, int64_t first_row, const int32_t* rows_index, int64_t rows, float* out) {
  switch (w.type) {
    case WeightType::kF32: return widen_rows_as<WeightType::kF32>(w, k, first_row, rows_index, rows, out);
    case WeightType::kBF16: return widen_rows_as<WeightType::kBF16>(w, k, first_row, rows_index, rows, out);
    case WeightType::kF16: return widen_rows_as<WeightType::kF16>(w, k, first_row, rows_index, rows, out);
    case WeightType::kInt8: return widen_rows_as<WeightType::kInt8>(w, k, first_row, rows_index, rows, out);
  }
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
