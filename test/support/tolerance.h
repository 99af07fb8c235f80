// How tests compare floating-point results, with one rationale for all of them.
//
// A kernel's result is checked against a plain reference computed in double precision on the
// same inputs, element by element: |got - ref| <= bound. Each test derives its bound from the
// operation's error analysis in float32 arithmetic, u = 2^-24 being the unit roundoff
// (|fl(a ∘ b) - a ∘ b| <= u·|a ∘ b|): a sum of K products is within (K + 1)·u·Σ|terms| of exact,
// a rescaling adds u, an exp of ours about 2u, and so on, as the test file's opening comment
// states for its op. Bounds are first-order: terms in u² (a rounding error of a rounding error)
// are dropped, which kFirstOrderMargin covers. So a bound is tight enough that a real bug (a
// wrong index, a missed mask, an operand read twice) fails it, and loose enough that no correct
// summation order can. Comparing two implementations with each other (CUDA with the CPU, one CPU
// variant with another) allows the sum of their bounds. Nothing is compared with a hand-picked
// "looks small" epsilon; a failure names the worst element, its values, error and allowed error.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <span>
#include <sstream>
#include <vector>

namespace eagerlm::test {

// Unit roundoff of float32 with round-to-nearest.
constexpr double kFloatEps = 0x1p-24;

// Covers the dropped second-order terms (about u ≈ 6e-8 relative to the bound itself).
constexpr double kFirstOrderMargin = 1.01;

// Requires |got[i] - ref[i]| <= bound[i] for every i (a NaN or infinity in got always fails).
// On failure reports the element with the largest error/bound ratio and how many failed.
inline void check_within(std::span<const float> got, std::span<const double> ref, std::span<const double> bound) {
  REQUIRE(got.size() == ref.size());
  REQUIRE(bound.size() == ref.size());
  size_t n_bad = 0, worst = 0;
  double worst_ratio = -1.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::abs(static_cast<double>(got[i]) - ref[i]);
    // err/bound, 0 for an exact match, infinite for a non-finite result.
    const double ratio = !std::isfinite(err) ? std::numeric_limits<double>::infinity()
                         : err == 0.0        ? 0.0
                                             : err / bound[i];
    if (!(err <= bound[i])) ++n_bad;
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = i;
    }
  }
  if (n_bad != 0) {
    std::ostringstream msg;
    msg.precision(9);
    msg << n_bad << " of " << got.size() << " elements out of tolerance (rng seed " << Catch::rngSeed()
        << "); worst at index " << worst << ": got " << got[worst] << ", reference " << ref[worst] << ", error "
        << std::abs(static_cast<double>(got[worst]) - ref[worst]) << ", allowed " << bound[worst];
    FAIL_CHECK(msg.str());
  } else {
    SUCCEED();
  }
}

// The common case: bound[i] = atol + rtol·|ref[i]|.
inline void check_close(std::span<const float> got, std::span<const double> ref, double atol, double rtol) {
  std::vector<double> bound(ref.size());
  for (size_t i = 0; i < ref.size(); ++i) bound[i] = atol + rtol * std::abs(ref[i]);
  check_within(got, ref, bound);
}

// One float32 result against another (two implementations): |got[i] - want[i]| <= bound[i],
// where a non-finite want must be matched by the identical bits.
inline void check_within_float(std::span<const float> got, std::span<const float> want, std::span<const double> bound) {
  REQUIRE(got.size() == want.size());
  std::vector<double> ref(want.begin(), want.end()), b(bound.begin(), bound.end());
  std::vector<float> g(got.begin(), got.end());
  for (size_t i = 0; i < want.size(); ++i)
    if (!std::isfinite(want[i]) && std::memcmp(&got[i], &want[i], sizeof(float)) == 0) g[i] = 0, ref[i] = 0;
  check_within(g, ref, b);
}

// got and want identical bit for bit (NaNs included); on failure names the first difference.
inline void check_identical(std::span<const float> got, std::span<const float> want) {
  REQUIRE(got.size() == want.size());
  size_t n_bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0 && n_bad++ == 0) first = i;
  if (n_bad != 0) {
    std::ostringstream msg;
    msg.precision(9);
    msg << n_bad << " of " << got.size() << " elements differ; first at " << first << ": got " << got[first]
        << ", want " << want[first];
    FAIL_CHECK(msg.str());
  } else {
    SUCCEED();
  }
}

}  // namespace eagerlm::test
