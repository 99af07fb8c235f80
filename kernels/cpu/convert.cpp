// Storage conversions between float32 and the half types (and I32 by value), elementwise: what a
// model load runs over gigabytes, so vectorized and split over the OpenMP threads. Every variant
// gives the bytes of dtype.h's scalar conversions: bf16 by the same integer arithmetic on 16 lanes
// (GCC vector extensions compiled for each variant's width; AVX2 narrows by hand); f16 by F16C (vcvtph2ps/vcvtps2ph,
// round to nearest even, exact on denormals) where the variant has it, with any group holding a
// NaN redone by the scalar code (the instructions quiet NaN payloads, dtype.h keeps them), and by
// the scalar code in the generic variant.
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstring>

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/parallel.h"

#include "kernels/cpu/isa_begin.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

namespace {

constexpr int64_t kGroup = 16;                  // elements per vector step
constexpr int64_t kParallelElements = 1 << 18;  // below this one thread converts
typedef uint32_t U32x16 __attribute__((vector_size(64)));
typedef uint16_t U16x16 __attribute__((vector_size(32)));

// Calls body(i0, i1) on ranges covering [0, n), one per thread when n is large, each a multiple of
// kGroup elements but the last.
template <typename Body>
void split(int64_t n, const Body& body) {
  if (n < kParallelElements) {
    body(int64_t(0), n);
    return;
  }
  parallel_ranges(n, body, kGroup);
}

// Checkpoint data need not be 2-byte aligned, so halves are loaded with memcpy.
inline uint16_t load_u16(const void* base, int64_t i) {
  uint16_t v;
  std::memcpy(&v, static_cast<const unsigned char*>(base) + 2 * size_t(i), 2);
  return v;
}
inline void store_u16(void* base, int64_t i, uint16_t v) {
  std::memcpy(static_cast<unsigned char*>(base) + 2 * size_t(i), &v, 2);
}

void bf16_to_f32(const void* src, float* dst, int64_t i0, int64_t i1) {
  int64_t i = i0;
  for (; i + kGroup <= i1; i += kGroup) {
    U16x16 h;
    std::memcpy(&h, static_cast<const unsigned char*>(src) + 2 * i, sizeof h);
    const U32x16 bits = __builtin_convertvector(h, U32x16) << 16;
    std::memcpy(dst + i, &bits, sizeof bits);
  }
  for (; i < i1; ++i) dst[i] = bf16_to_float(load_u16(src, i));
}

// float_to_bf16 of dtype.h on 16 lanes: round to nearest even, NaN quieted with its sign kept.
inline void f32_group_to_bf16(const float* src, unsigned char* dst) {
#if defined(EAGERLM_CPU_HAS_AVX2) && !defined(EAGERLM_CPU_HAS_AVX512)
  // GCC narrows 32-bit lanes to 16 without AVX-512's vpmovdw one lane at a time: pack by hand.
  __m256i r[2];
  for (int h = 0; h < 2; ++h) {
    const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 8 * h));
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    const __m256i rounded =
        _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd), 16);
    const __m256i quiet_nan = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
    const __m256i nan =
        _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
    r[h] = _mm256_blendv_epi8(rounded, quiet_nan, nan);
  }
  // packus interleaves the 128-bit halves of its operands; the permute restores the order.
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r[0], r[1]), 0xD8);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), packed);
#else
  U32x16 u;
  std::memcpy(&u, src, sizeof u);
  const U32x16 rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const U32x16 quiet_nan = (u >> 16) | 0x40u;
  const U32x16 r = (u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded;
  const U16x16 h = __builtin_convertvector(r, U16x16);
  std::memcpy(dst, &h, sizeof h);
#endif
}

void f32_to_bf16(const float* src, void* dst, int64_t i0, int64_t i1) {
  int64_t i = i0;
  for (; i + kGroup <= i1; i += kGroup) f32_group_to_bf16(src + i, static_cast<unsigned char*>(dst) + 2 * i);
  for (; i < i1; ++i) store_u16(dst, i, float_to_bf16(src[i]));
}

// 16 halves at src to floats at dst by F16C; false (nothing written) if one of them is a NaN.
inline bool f16_group_to_f32(const unsigned char* src, float* dst) {
#if defined(EAGERLM_CPU_HAS_AVX512)
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
  if (_mm256_cmpgt_epi16_mask(_mm256_and_si256(h, _mm256_set1_epi16(0x7fff)), _mm256_set1_epi16(0x7c00))) return false;
  _mm512_storeu_ps(dst, _mm512_maskz_cvtph_ps(0xFFFF, h));
  return true;
#elif defined(EAGERLM_CPU_HAS_AVX2)
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
  const __m256i nan = _mm256_cmpgt_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x7fff)), _mm256_set1_epi16(0x7c00));
  if (!_mm256_testz_si256(nan, nan)) return false;
  _mm256_storeu_ps(dst, _mm256_cvtph_ps(_mm256_castsi256_si128(h)));
  _mm256_storeu_ps(dst + 8, _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1)));
  return true;
#else
  (void)src, (void)dst;
  return false;
#endif
}

// 16 floats at src to halves at dst by F16C (nearest even); false (nothing written) on a NaN.
inline bool f32_group_to_f16(const float* src, unsigned char* dst) {
#if defined(EAGERLM_CPU_HAS_AVX2)
  constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
#endif
#if defined(EAGERLM_CPU_HAS_AVX512)
  const __m512 v = _mm512_loadu_ps(src);
  if (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q)) return false;
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm512_maskz_cvtps_ph(0xFFFF, v, kNearest));
  return true;
#elif defined(EAGERLM_CPU_HAS_AVX2)
  const __m256 a = _mm256_loadu_ps(src), b = _mm256_loadu_ps(src + 8);
  if (_mm256_movemask_ps(_mm256_or_ps(_mm256_cmp_ps(a, a, _CMP_UNORD_Q), _mm256_cmp_ps(b, b, _CMP_UNORD_Q))))
    return false;
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm256_cvtps_ph(a, kNearest));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 16), _mm256_cvtps_ph(b, kNearest));
  return true;
#else
  (void)src, (void)dst;
  return false;
#endif
}

void f16_to_f32(const void* src, float* dst, int64_t i0, int64_t i1) {
  const auto* bytes = static_cast<const unsigned char*>(src);
  for (int64_t i = i0; i < i1; i += kGroup) {
    const int64_t end = std::min(i1, i + kGroup);
    if (end - i < kGroup || !f16_group_to_f32(bytes + 2 * i, dst + i)) {
      for (int64_t e = i; e < end; ++e) dst[e] = f16_to_float(load_u16(src, e));
    }
  }
}

void f32_to_f16(const float* src, void* dst, int64_t i0, int64_t i1) {
  auto* bytes = static_cast<unsigned char*>(dst);
  for (int64_t i = i0; i < i1; i += kGroup) {
    const int64_t end = std::min(i1, i + kGroup);
    if (end - i < kGroup || !f32_group_to_f16(src + i, bytes + 2 * i)) {
      for (int64_t e = i; e < end; ++e) store_u16(dst, e, float_to_f16(src[e]));
    }
  }
}

}  // namespace

void convert_to_f32(const void* src, DType from, float* dst, int64_t n) {
  switch (from) {
    case DType::kI32:
      for (int64_t i = 0; i < n; ++i) {
        int32_t v;
        std::memcpy(&v, static_cast<const char*>(src) + 4 * size_t(i), 4);
        dst[i] = float(v);
      }
      return;
    case DType::kI8:
      for (int64_t i = 0; i < n; ++i) dst[i] = float(static_cast<const int8_t*>(src)[i]);
      return;
    case DType::kF32:
      split(n, [&](int64_t i0, int64_t i1) {
        std::memcpy(dst + i0, static_cast<const float*>(src) + i0, size_t(i1 - i0) * 4);
      });
      return;
    case DType::kF16: split(n, [&](int64_t i0, int64_t i1) { f16_to_f32(src, dst, i0, i1); }); return;
    case DType::kBF16: split(n, [&](int64_t i0, int64_t i1) { bf16_to_f32(src, dst, i0, i1); }); return;
  }
}

void convert_from_f32(const float* src, DType to, void* dst, int64_t n) {
  switch (to) {
    case DType::kI32:
      for (int64_t i = 0; i < n; ++i) {
        const int32_t v = int32_t(src[i]);
        std::memcpy(static_cast<char*>(dst) + 4 * size_t(i), &v, 4);
      }
      return;
    case DType::kI8:
      for (int64_t i = 0; i < n; ++i) static_cast<int8_t*>(dst)[i] = int8_t(src[i]);
      return;
    case DType::kF32:
      split(n,
            [&](int64_t i0, int64_t i1) { std::memcpy(static_cast<float*>(dst) + i0, src + i0, size_t(i1 - i0) * 4); });
      return;
    case DType::kF16: split(n, [&](int64_t i0, int64_t i1) { f32_to_f16(src, dst, i0, i1); }); return;
    case DType::kBF16: split(n, [&](int64_t i0, int64_t i1) { f32_to_bf16(src, dst, i0, i1); }); return;
  }
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
