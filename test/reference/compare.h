// Shared helpers for kernel tests: reproducible random inputs and the tolerance check
// |got - ref| <= bound, which reports the worst element (index, values, error, bound).
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <sstream>
#include <vector>

namespace eagerlm::reference {

// Unit roundoff of float32 with round-to-nearest: |fl(a ∘ b) - a ∘ b| <= kFloatEps·|a ∘ b|.
constexpr double kFloatEps = 0x1p-24;

// The per-element bounds in the kernel tests are first-order error analyses: terms in u² (such as
// a rounding error of a rounding error) are dropped. Those are about u ≈ 6e-8 relative to the
// bound itself, so a 1% margin covers them with room to spare.
constexpr double kFirstOrderMargin = 1.01;

// A generator seeded from Catch's --rng-seed (CTest runs with `--rng-seed time`, and Catch prints
// the seed on failure) mixed with a per-test salt, so each test draws different inputs and a
// failure reproduces with `--rng-seed <printed seed>`.
inline std::mt19937 test_rng(uint32_t salt) {
  std::seed_seq seq{Catch::rngSeed(), salt};
  return std::mt19937(seq);
}

inline std::vector<float> random_floats(std::mt19937& rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Requires |got[i] - ref[i]| <= bound[i] for every i (a NaN or infinity in got always fails).
// On failure reports the element with the largest error/bound ratio and how many failed.
inline void check_within(std::span<const float> got, std::span<const double> ref,
                         std::span<const double> bound) {
  REQUIRE(got.size() == ref.size());
  REQUIRE(bound.size() == ref.size());
  size_t n_bad = 0;
  size_t worst = 0;
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
    msg << n_bad << " of " << got.size() << " elements out of tolerance (rng seed "
        << Catch::rngSeed() << "); worst at index " << worst << ": got " << got[worst]
        << ", reference " << ref[worst] << ", error "
        << std::abs(static_cast<double>(got[worst]) - ref[worst]) << ", allowed " << bound[worst];
    FAIL_CHECK(msg.str());
  } else {
    SUCCEED();
  }
}

// The common case: bound[i] = atol + rtol·|ref[i]|.
inline void check_close(std::span<const float> got, std::span<const double> ref, double atol,
                        double rtol) {
  std::vector<double> bound(ref.size());
  for (size_t i = 0; i < ref.size(); ++i) bound[i] = atol + rtol * std::abs(ref[i]);
  check_within(got, ref, bound);
}

}  // namespace eagerlm::reference
