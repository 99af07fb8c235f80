// Stored values widened to float on the GPU: weights of the kernels' weight types
// (kernels/common/weights.h) and KV-cache elements (F32, BF16, F16), as raw bits so that the
// device sees exactly the bytes the CPU does. bf16 and f16 widen exactly; an int8 weight is
// float(q)·s, rounded once (as kernels/cpu/widen.h computes it). Narrowing (the KV cache) rounds
// to nearest even, as kernels/common/dtype.h does for every finite value.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/weights.h"

namespace eagerlm::cuda {

template <WeightType T>
struct StoredOf {
  using type = float;
};
template <>
struct StoredOf<WeightType::kBF16> {
  using type = uint16_t;
};
template <>
struct StoredOf<WeightType::kF16> {
  using type = uint16_t;
};
template <>
struct StoredOf<WeightType::kInt8> {
  using type = int8_t;
};
template <WeightType T>
using Stored = typename StoredOf<T>::type;

// The value of a stored element (int8: its unscaled integer value).
template <WeightType T>
__device__ __forceinline__ float widen(Stored<T> v) {
  if constexpr (T == WeightType::kBF16) {
    return __uint_as_float(uint32_t(v) << 16);
  } else if constexpr (T == WeightType::kF16) {
    return __half2float(__ushort_as_half(v));
  } else {
    return float(v);
  }
}

// Element i of a stored matrix through the read-only cache.
template <WeightType T>
__device__ __forceinline__ float load_widened(const Stored<T>* p, int64_t i) {
  return widen<T>(__ldg(p + i));
}

// v rounded into a cache element of type T (kF32, kBF16 or kF16).
template <WeightType T>
__device__ __forceinline__ Stored<T> narrow(float v) {
  if constexpr (T == WeightType::kBF16) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(v));
  } else if constexpr (T == WeightType::kF16) {
    return __half_as_ushort(__float2half_rn(v));
  } else {
    return v;
  }
}

}  // namespace eagerlm::cuda
