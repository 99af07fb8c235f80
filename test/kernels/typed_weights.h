// Random typed weight matrices for the typed-kernel tests: the stored data (what the kernels
// read), and its exact values in double (what the references use): bf16/f16 widened exactly,
// int8 as scale·q in double. int8 data is drawn directly (q uniform in [-127, 127], scales in
// (0, 1/64], one block's scale 0), so the product tests do not depend on the quantizer. Also the
// panels the CPU's panel kernels read such a matrix from, and their batch-invariance check.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/common/dtype.h"
#include "kernels/common/weights.h"
#include "test/support/random.h"
#include "test/support/tolerance.h"

namespace eagerlm::test {

struct TypedMatrix {
  WeightType type = WeightType::kF32;
  std::vector<float> f32;
  std::vector<uint16_t> halves;
  std::vector<int8_t> q;
  std::vector<float> scales;
  std::vector<double> values;  // the exact weights, in the matrix's layout (empty for panels)

  Weights view() const {
    const void* data = type == WeightType::kF32    ? static_cast<const void*>(f32.data())
                       : type == WeightType::kInt8 ? static_cast<const void*>(q.data())
                                                   : static_cast<const void*>(halves.data());
    return {type, data, type == WeightType::kInt8 ? scales.data() : nullptr};
  }
};

// A [k, n] input-major (or [n, k] output-major) matrix of `type`; k % kInt8Block == 0 for int8.
inline TypedMatrix random_typed_matrix(std::mt19937& rng, WeightType type, int64_t k, int64_t n, bool input_major) {
  TypedMatrix t;
  t.type = type;
  const size_t count = size_t(k * n);
  t.values.resize(count);
  if (type == WeightType::kInt8) {
    std::uniform_int_distribution<int> qd(-127, 127);
    t.q.resize(count);
    for (auto& v : t.q) v = int8_t(qd(rng));
    t.scales = random_floats(rng, size_t(k / kInt8Block * n), 1.0f / 4096, 1.0f / 64);
    if (!t.scales.empty()) t.scales[t.scales.size() / 2] = 0.0f;  // an all-zero block
    const int64_t blocks = k / kInt8Block;
    for (int64_t a = 0; a < (input_major ? k : n); ++a) {
      for (int64_t b = 0; b < (input_major ? n : k); ++b) {
        // input-major: a = i (input), b = j (output); output-major: a = j, b = i.
        const float s =
            input_major ? t.scales[size_t(a / kInt8Block * n + b)] : t.scales[size_t(a * blocks + b / kInt8Block)];
        const size_t e = size_t(a * (input_major ? n : k) + b);
        t.values[e] = double(s) * double(t.q[e]);
      }
    }
    return t;
  }
  const std::vector<float> w = random_floats(rng, count, -1.0f, 1.0f);
  if (type == WeightType::kF32) {
    t.f32 = w;
    for (size_t e = 0; e < count; ++e) t.values[e] = w[e];
    return t;
  }
  t.halves.resize(count);
  for (size_t e = 0; e < count; ++e) {
    t.halves[e] = type == WeightType::kBF16 ? float_to_bf16(w[e]) : float_to_f16(w[e]);
    t.values[e] = type == WeightType::kBF16 ? bf16_to_float(t.halves[e]) : f16_to_float(t.halves[e]);
  }
  return t;
}

// An input-major [k, n] matrix in the panels the CPU holds its type in (kernels/common/weights.h):
// row panels for f32 and f16, int8 panels with their scales, paired panels for bf16. The last
// panel's padding is poison, NaN (and random int8 bytes), which a kernel may compute with but must
// never store: dense_block (strided_output.h) checks y's padding, and a NaN would show past n.
// The panels' `values` stay empty (the references use w's).
inline TypedMatrix in_panels(std::mt19937& rng, const TypedMatrix& w, int64_t k, int64_t n) {
  const int64_t padded = panel_count(n) * kPanelColumns;
  const size_t size = size_t(padded * k);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  TypedMatrix p;
  p.type = w.type;
  switch (w.type) {
    case WeightType::kF32:
      p.f32.assign(size, nan);
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < n; ++j) p.f32[size_t(panel_index(i, j, k))] = w.f32[size_t(i * n + j)];
      break;
    case WeightType::kF16:
    case WeightType::kBF16: {
      const bool paired = w.type == WeightType::kBF16;
      p.halves.assign(size, paired ? uint16_t(0x7FC0) : uint16_t(0x7E00));  // the type's NaN
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < n; ++j)
          p.halves[size_t(paired ? paired_panel_index(i, j, k) : panel_index(i, j, k))] = w.halves[size_t(i * n + j)];
      break;
    }
    case WeightType::kInt8: {
      std::uniform_int_distribution<int> byte(-128, 127);
      p.q.resize(size);
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < padded; ++j)
          p.q[size_t(panel_index(i, j, k))] = j < n ? w.q[size_t(i * n + j)] : int8_t(byte(rng));
      p.scales.assign(size_t(padded / kPanelColumns * k), nan);
      for (int64_t b = 0; b < k / kInt8Block; ++b)
        for (int64_t j = 0; j < n; ++j) p.scales[size_t(int8_panel_scale_index(b, j, k))] = w.scales[size_t(b * n + j)];
      break;
    }
  }
  return p;
}

// Batch invariance: every 7th of the m rows of `all` (row stride n), computed alone by
// run(x_row, 1, y) from x (row stride k), gives the same bits. run(x, rows, y) computes `rows`
// rows into y.
template <class Run>
void check_each_row_alone(const std::vector<float>& x, const std::vector<float>& all, int64_t m, int64_t k, int64_t n,
                          const Run& run) {
  std::vector<float> alone(static_cast<size_t>(n));
  for (int64_t r = 0; r < m; r += 7) {
    run(x.data() + r * k, int64_t(1), alone.data());
    CHECK(std::memcmp(alone.data(), all.data() + r * n, size_t(n) * sizeof(float)) == 0);
  }
}

// The error bound of a product under GemmMath::kBf16 (test_linear_typed.cpp derives it): x rounded
// to bf16 (2^-8 relative), float32 sums of k + 1 terms, the denormals the instructions flush:
// 2^-8·A + (k+3)·u·A + (2k+1)·2^-126 per element, A = Σ|x·w| + |b| from the reference.
inline std::vector<double> bf16_math_bound(const std::vector<double>& abs_sum, int64_t k) {
  std::vector<double> bound(abs_sum.size());
  for (size_t i = 0; i < bound.size(); ++i)
    bound[i] = kFirstOrderMargin * ((0x1p-8 + double(k + 3) * kFloatEps) * abs_sum[i] + double(2 * k + 1) * 0x1p-126);
  return bound;
}

}  // namespace eagerlm::test
