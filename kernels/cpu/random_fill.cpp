// The initializer's CPU fill loops (see cpu_ops.h). Each thread takes one contiguous range; inside it, the counter's
// high word is constant over runs of up to 2^32 elements, so the inner loops are pure 32-bit integer and float
// arithmetic that the compiler vectorizes (AVX-512: 16 elements per instruction). Compiled with -ffp-contract=off
// -fno-math-errno (see CMakeLists.txt): the first keeps every rounding as written in normal.h, the second lets sqrt
// vectorize.
#include <algorithm>
#include <cstring>

#include "kernels/common/random/normal.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/parallel.h"

#include "kernels/cpu/isa_begin.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

using namespace rng;  // threefry2x32, the normal transform, Key

namespace {

// Runs body(begin, end) over [0, n) split into one contiguous range per thread (boundaries at 16
// elements, so threads do not share cache lines), the calling thread alone for small tensors
// (threads_for).
template <typename Body>
void fill_ranges(int64_t n, const Body& body) {
  parallel_ranges(n, body, 16, threads_for(n));
}

// Elements per pass in normal_run: three 4 KiB scratch arrays, all resident in L1.
constexpr uint32_t kPassElements = 1024;

// out[j] for j in [0, count): elements with counter (hi, lo + j); lo + count <= 2^32. Each block
// runs three vectorized passes over L1-resident scratch (bits; u and w; the result) instead of
// one loop doing everything: the single loop needs more live values than there are vector
// registers and spills, so the split is about 25% faster. Values are the same either way (every
// pass computes the same per-element functions).
// `finish` turns erfinv(u) into the stored value (times sqrt(2), times the scale).
template <typename Finish>
void normal_run(Key key, const Finish& finish, float* out, uint32_t hi, uint32_t lo, uint32_t count) {
  alignas(64) uint32_t bits[kPassElements];
  alignas(64) float u[kPassElements];
  alignas(64) float w[kPassElements];
  for (uint32_t base = 0; base < count; base += kPassElements) {
    const uint32_t m = std::min(kPassElements, count - base);
    const uint32_t first = lo + base;
#pragma omp simd aligned(bits : 64)
    for (uint32_t j = 0; j < m; ++j) {
      const Block b = threefry2x32(key, {hi, first + j});
      bits[j] = b.x0 ^ b.x1;
    }
#pragma omp simd aligned(bits, u, w : 64)
    for (uint32_t j = 0; j < m; ++j) {
      u[j] = uniform_pm1_from_bits(bits[j]);
      w[j] = erfinv_w(u[j]);
    }
    float* const dst = out + base;
#pragma omp simd aligned(u, w : 64)
    for (uint32_t j = 0; j < m; ++j) dst[j] = finish(erfinv_from_w(u[j], w[j]));
  }
}

// Fills out[0, n) with elements first_index .. first_index + n - 1, one run per 2^32 block.
template <typename Finish>
void normal_range(Key key, const Finish& finish, float* out, uint64_t first_index, int64_t n) {
  while (n > 0) {
    const uint32_t hi = uint32_t(first_index >> 32), lo = uint32_t(first_index);
    const uint64_t left_in_block = (uint64_t{1} << 32) - lo;  // the high word changes after these
    const uint32_t count = uint32_t(std::min({uint64_t(n), left_in_block, uint64_t{1} << 31}));
    normal_run(key, finish, out, hi, lo, count);
    out += count;
    first_index += count;
    n -= int64_t(count);
  }
}

// jax.random.normal's last steps as written: sqrt(2)·erfinv(u), then `* stddev`.
struct TimesSqrt2ThenStddev {
  float stddev;
  float operator()(float erfinv_u) const { return scaled_normal_from_erfinv(erfinv_u, stddev); }
};

// erfinv(u)·scale in one rounding: what XLA makes of `normal(key, shape) * c` inside a jit
// (its algebraic simplifier folds sqrt(2)·c into one constant).
struct TimesScale {
  float scale;
  float operator()(float erfinv_u) const { return fp::mul(erfinv_u, scale); }
};

// out[i] = value(random_bits32(key, first_index + i)) for i in [0, n), multi-threaded.
template <typename T, typename Value>
void fill_from_bits(Key key, const Value& value, T* out, int64_t n, uint64_t first_index) {
  if (n <= 0) return;
  fill_ranges(n, [&](int64_t begin, int64_t end) {
    uint64_t index = first_index + uint64_t(begin);
    for (int64_t i = begin; i < end;) {
      // The counter's high word is constant within the run: the loop is 32-bit arithmetic only.
      const uint32_t hi = uint32_t(index >> 32), lo = uint32_t(index);
      const uint64_t left_in_block = (uint64_t{1} << 32) - lo;
      const int64_t count = int64_t(std::min<uint64_t>(uint64_t(end - i), left_in_block));
      T* const dst = out + i;
#pragma omp simd
      for (int64_t j = 0; j < count; ++j) {
        const Block b = threefry2x32(key, {hi, lo + uint32_t(j)});
        dst[j] = value(b.x0 ^ b.x1);
      }
      i += count;
      index += uint64_t(count);
    }
  });
}

}  // namespace

void fill_normal_f32(Key key, float stddev, float* out, int64_t n, uint64_t first_index) {
  if (n <= 0) return;
  fill_ranges(n, [&](int64_t begin, int64_t end) {
    normal_range(key, TimesSqrt2ThenStddev{stddev}, out + begin, first_index + uint64_t(begin), end - begin);
  });
}

void fill_erfinv_scaled_f32(Key key, float scale, float* out, int64_t n, uint64_t first_index) {
  if (n <= 0) return;
  fill_ranges(n, [&](int64_t begin, int64_t end) {
    normal_range(key, TimesScale{scale}, out + begin, first_index + uint64_t(begin), end - begin);
  });
}

void fill_normal(Key key, float stddev, DType dtype, void* out, int64_t n, uint64_t first_index) {
  if (dtype == DType::kF32) return fill_normal_f32(key, stddev, static_cast<float*>(out), n, first_index);
  if (n <= 0) return;
  // Half-width outputs: generate a cache-resident block of float32, then convert it into place.
  constexpr int64_t kBlock = 4096;
  auto* dst = static_cast<unsigned char*>(out);
  fill_ranges(n, [&](int64_t begin, int64_t end) {
    alignas(64) float block[kBlock];
    for (int64_t i = begin; i < end; i += kBlock) {
      const int64_t count = std::min(kBlock, end - i);
      normal_range(key, TimesSqrt2ThenStddev{stddev}, block, first_index + uint64_t(i), count);
      cpu::convert_from_f32(block, dtype, dst + 2 * i, count);  // the dispatched entry point
    }
  });
}

void fill_random_bits32(Key key, uint32_t* out, int64_t n, uint64_t first_index) {
  fill_from_bits(
      key, [](uint32_t bits) { return bits; }, out, n, first_index);
}

void fill_uniform_f32(Key key, float lo, float width, float* out, int64_t n, uint64_t first_index) {
  fill_from_bits(
      key, [lo, width](uint32_t bits) { return uniform_from_bits(bits, lo, width); }, out, n, first_index);
}

void fill_constant(float value, DType dtype, void* out, int64_t n) {
  if (n <= 0) return;
  if (dtype == DType::kF32) {
    auto* dst = static_cast<float*>(out);
    fill_ranges(n, [&](int64_t begin, int64_t end) { std::fill(dst + begin, dst + end, value); });
    return;
  }
  const uint16_t pattern = dtype == DType::kF16 ? float_to_f16(value) : float_to_bf16(value);
  auto* dst = static_cast<uint16_t*>(out);
  fill_ranges(n, [&](int64_t begin, int64_t end) { std::fill(dst + begin, dst + end, pattern); });
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
