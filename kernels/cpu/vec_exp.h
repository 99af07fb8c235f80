// A float exp that GCC can inline and vectorize inside `#pragma omp simd` loops (std::exp is a
// library call that blocks vectorization without -ffast-math). Shared by gelu, softmax and
// attention. Relative error about 2 ulp over the normal range.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

namespace eagerlm::cpu::detail {

// exp(x) = 2^n · e^r with n = round(x / ln 2), r = x - n·ln 2 ∈ [-ln2/2, ln2/2]; e^r by its
// degree-7 Taylor polynomial (truncation r^8/8! < 6e-9 relative), 2^n built in the exponent
// bits. Inputs below ln(FLT_MIN) ≈ -87.3365 (results under 2^-126) give exactly 0; inputs above
// 88.3 saturate near FLT_MAX instead of overflowing, which callers tolerate (they divide by it or
// never reach it). Both clamps keep n in [-126, 127], a normal exponent.
inline float vec_exp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  // ln 2 split so that n·kLn2Hi is exact for |n| < 2^15 (kLn2Hi has 9 significant bits).
  constexpr float kLn2Hi = 0.693359375f;
  constexpr float kLn2Lo = -2.12194440e-4f;
  constexpr float kRoundMagic = 12582912.0f;  // 1.5·2^23: adding it rounds to an integer
  constexpr float kLowest = -87.33654f;       // ln(2^-126)
  constexpr float kHighest = 88.3f;
  const bool underflow = x < kLowest;
  // NaN (weights may hold it: not a format error) comes out as NaN; converting it to an integer
  // below would be undefined, so the arithmetic runs on 0 instead.
  const bool nan = !(x == x);
  const float xc = nan ? 0.0f : std::min(std::max(x, kLowest), kHighest);
  const float n = (xc * kLog2e + kRoundMagic) - kRoundMagic;
  const float r = (xc - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.0f / 5040.0f + r * (1.0f / 40320.0f);
  p = 1.0f / 720.0f + r * p;
  p = 1.0f / 120.0f + r * p;
  p = 1.0f / 24.0f + r * p;
  p = 1.0f / 6.0f + r * p;
  p = 0.5f + r * p;
  p = 1.0f + r * p;
  p = 1.0f + r * p;
  const int32_t biased = static_cast<int32_t>(n) + 127;
  const float scale = std::bit_cast<float>(static_cast<uint32_t>(biased) << 23);
  return nan ? x : underflow ? 0.0f : p * scale;
}

}  // namespace eagerlm::cpu::detail
