// Float vectors at the variant's width, loads that widen stored weights (f32, bf16, f16, int8)
// into them, and fixed-order sums: the only ISA-specific code of the typed kernels (and of the
// reductions of layer_norm, softmax and attention), which are written once over these helpers.
// Included by a kernel source INSIDE its ISA region (after isa_begin.h), so each variant gets its
// own copy in its own namespace; <immintrin.h> and dtype.h/weights.h must be
// included before the region.
//
//   AVX-512: 16 lanes; bf16 is a 16-bit shift, f16 vcvtph2ps, int8 vpmovsxbd + vcvtdq2ps; partial
//            vectors use masked loads and stores (which never touch the masked-off memory).
//   AVX2:    8 lanes, the same instructions at 256 bits (F16C for f16).
//   generic: 4 lanes in GCC vector extensions (SSE2 on x86-64, NEON elsewhere), portable
//            conversions; f16 widens lane by lane.
// Partial vectors outside AVX-512 go through a zeroed stack buffer. Pointers need only the
// alignment of a byte (checkpoint data need not be aligned).
#pragma once

namespace eagerlm::cpu::EAGERLM_CPU_ISA::simd {

#if defined(EAGERLM_CPU_HAS_AVX512)
constexpr int kLanes = 16;
using VecF = __m512;
#elif defined(EAGERLM_CPU_HAS_AVX2)
constexpr int kLanes = 8;
using VecF = __m256;
#else
constexpr int kLanes = 4;
typedef float VecF __attribute__((vector_size(16)));
#endif

// The element type each WeightType stores.
template <WeightType T>
struct StorageOf {
  using type = float;
};
template <>
struct StorageOf<WeightType::kBF16> {
  using type = uint16_t;
};
template <>
struct StorageOf<WeightType::kF16> {
  using type = uint16_t;
};
template <>
struct StorageOf<WeightType::kInt8> {
  using type = int8_t;
};
template <WeightType T>
using Storage = typename StorageOf<T>::type;

inline VecF zero() { return VecF{}; }

inline VecF splat(float v) {
#if defined(EAGERLM_CPU_HAS_AVX512)
  return _mm512_set1_ps(v);
#elif defined(EAGERLM_CPU_HAS_AVX2)
  return _mm256_set1_ps(v);
#else
  return VecF{} + v;
#endif
}

// a·b + c. With FMA (avx2, avx512) one rounding, spelled as the instruction so that no
// compiler choice about contraction can differ between two code paths; the generic variant
// has no FMA on x86-64 and rounds the product and the sum.
inline VecF fma(VecF a, VecF b, VecF c) {
#if defined(EAGERLM_CPU_HAS_AVX512)
  return _mm512_fmadd_ps(a, b, c);
#elif defined(EAGERLM_CPU_HAS_AVX2)
  return _mm256_fmadd_ps(a, b, c);
#else
  return a * b + c;
#endif
}

// Makes the compiler hold v in a register: GCC otherwise folds a vector used by several FMAs
// into each of them as a memory operand, one load per FMA, and load ports then bound the loop.
inline void keep_in_register(VecF& v) {
#if defined(__x86_64__)
  __asm__("" : "+v"(v));
#elif defined(__aarch64__)
  __asm__("" : "+w"(v));
#else
  (void)v;
#endif
}

inline float reduce_add(VecF v) {
#if defined(EAGERLM_CPU_HAS_AVX512)
  const __m256 h = _mm256_add_ps(_mm512_maskz_extractf32x8_ps(0xFF, v, 0), _mm512_maskz_extractf32x8_ps(0xFF, v, 1));
  const __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  const __m128 d = _mm_add_ps(q, _mm_movehl_ps(q, q));
  return _mm_cvtss_f32(_mm_add_ss(d, _mm_movehdup_ps(d)));
#else
  float lanes[kLanes];
  __builtin_memcpy(lanes, &v, sizeof v);
  float s = 0.0f;
  for (int l = 0; l < kLanes; ++l) s += lanes[l];
  return s;
#endif
}

#if defined(EAGERLM_CPU_HAS_AVX512)
inline __mmask16 first_lanes(int count) { return __mmask16((1u << count) - 1u); }

// bf16 bits to float: a 16-bit shift left. (The zero-masking forms: GCC 12 warns that the plain
// ones pass an "undefined" vector, as attention.cpp notes.)
inline __m512 bf16_bits_to_float(__m256i h) {
  return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xFFFF, _mm512_maskz_cvtepu16_epi32(0xFFFF, h), 16));
}
#endif

// kLanes weights starting at p, widened to float.
template <WeightType T>
inline VecF load(const Storage<T>* p) {
#if defined(EAGERLM_CPU_HAS_AVX512)
  if constexpr (T == WeightType::kF32) return _mm512_loadu_ps(p);
  if constexpr (T == WeightType::kBF16) return bf16_bits_to_float(_mm256_loadu_si256((const __m256i*)p));
  if constexpr (T == WeightType::kF16) return _mm512_maskz_cvtph_ps(0xFFFF, _mm256_loadu_si256((const __m256i*)p));
  if constexpr (T == WeightType::kInt8)
    return _mm512_maskz_cvtepi32_ps(0xFFFF, _mm512_maskz_cvtepi8_epi32(0xFFFF, _mm_loadu_si128((const __m128i*)p)));
#elif defined(EAGERLM_CPU_HAS_AVX2)
  if constexpr (T == WeightType::kF32) return _mm256_loadu_ps(p);
  if constexpr (T == WeightType::kBF16)
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)p)), 16));
  if constexpr (T == WeightType::kF16) return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)p));
  if constexpr (T == WeightType::kInt8)
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i*)p)));
#else
  typedef uint16_t U16 __attribute__((vector_size(2 * kLanes)));
  typedef uint32_t U32 __attribute__((vector_size(4 * kLanes)));
  typedef int8_t I8 __attribute__((vector_size(kLanes)));
  if constexpr (T == WeightType::kF32) {
    VecF v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
  }
  if constexpr (T == WeightType::kBF16) {
    U16 h;
    __builtin_memcpy(&h, p, sizeof h);
    const U32 bits = __builtin_convertvector(h, U32) << 16;
    VecF v;
    __builtin_memcpy(&v, &bits, sizeof v);
    return v;
  }
  if constexpr (T == WeightType::kF16) {
    uint16_t h[kLanes];
    __builtin_memcpy(h, p, sizeof h);  // p need not be 2-byte aligned (checkpoint data)
    VecF v;
    for (int l = 0; l < kLanes; ++l) v[l] = f16_to_float(h[l]);
    return v;
  }
  if constexpr (T == WeightType::kInt8) {
    I8 q;
    __builtin_memcpy(&q, p, sizeof q);
    return __builtin_convertvector(q, VecF);
  }
#endif
}

// The first `count` (< kLanes) weights at p, the other lanes 0; nothing past them is read.
template <WeightType T>
inline VecF load_partial(const Storage<T>* p, int count) {
#if defined(EAGERLM_CPU_HAS_AVX512)
  const __mmask16 m = first_lanes(count);
  if constexpr (T == WeightType::kF32) return _mm512_maskz_loadu_ps(m, p);
  if constexpr (T == WeightType::kBF16) return bf16_bits_to_float(_mm256_maskz_loadu_epi16(m, p));
  if constexpr (T == WeightType::kF16) return _mm512_maskz_cvtph_ps(0xFFFF, _mm256_maskz_loadu_epi16(m, p));
  if constexpr (T == WeightType::kInt8)
    return _mm512_maskz_cvtepi32_ps(0xFFFF, _mm512_maskz_cvtepi8_epi32(0xFFFF, _mm_maskz_loadu_epi8(m, p)));
#else
  Storage<T> buffer[kLanes] = {};
  __builtin_memcpy(buffer, p, size_t(count) * sizeof(Storage<T>));
  return load<T>(buffer);
#endif
}

// kLanes outputs' pairs of bf16 weights at p (paired panels, weights.h: each 32-bit word holds the
// even input's weight in its low half, the odd input's in its high half), widened exactly into the
// even and the odd input's vectors: a shift and a mask.
inline void load_pairs(const uint32_t* p, VecF& even, VecF& odd) {
#if defined(EAGERLM_CPU_HAS_AVX512)
  const __m512i v = _mm512_loadu_si512(p);
  even = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xFFFF, v, 16));
  odd = _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32(int32_t(0xFFFF0000u))));
#elif defined(EAGERLM_CPU_HAS_AVX2)
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  even = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
  odd = _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32(int32_t(0xFFFF0000u))));
#else
  uint16_t h[2 * kLanes];
  __builtin_memcpy(h, p, sizeof h);  // the panel's halves in order: each pair's even input first
  for (int l = 0; l < kLanes; ++l) {
    even[l] = bf16_to_float(h[2 * l]);
    odd[l] = bf16_to_float(h[2 * l + 1]);
  }
#endif
}

inline VecF load_floats(const float* p, int count) {
  return count == kLanes ? load<WeightType::kF32>(p) : load_partial<WeightType::kF32>(p, count);
}

// Stores the first `count` (<= kLanes) lanes of v at p; nothing past them is written.
inline void store(float* p, VecF v, int count) {
#if defined(EAGERLM_CPU_HAS_AVX512)
  if (count == kLanes) {
    _mm512_storeu_ps(p, v);
  } else {
    _mm512_mask_storeu_ps(p, first_lanes(count), v);
  }
#else
  __builtin_memcpy(p, &v, size_t(count) * sizeof(float));
#endif
}

// Σ p[i] and Σ a[i]·b[i] for i < n in one fixed order whatever the pointers' alignment (so a
// row's sum does not depend on where the row sits, as an auto-vectorized reduction peeled for
// alignment would): lane l of one accumulator takes the elements i ≡ l (mod kLanes) in order of
// i, the last vector zero-padded, then reduce_add's fixed tree.
inline float sum(const float* p, int64_t n) {
  VecF acc = zero();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) acc += load<WeightType::kF32>(p + i);
  if (i < n) acc += load_partial<WeightType::kF32>(p + i, int(n - i));
  return reduce_add(acc);
}

inline float dot(const float* a, const float* b, int64_t n) {
  VecF acc = zero();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) acc = fma(load<WeightType::kF32>(a + i), load<WeightType::kF32>(b + i), acc);
  if (i < n) {
    const int rest = int(n - i);
    acc = fma(load_partial<WeightType::kF32>(a + i, rest), load_partial<WeightType::kF32>(b + i, rest), acc);
  }
  return reduce_add(acc);
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA::simd
