// Random inputs for tests: generators seeded from Catch's --rng-seed (CTest runs with
// `--rng-seed time`, and Catch prints the seed on failure) mixed with a per-test salt, so each
// test draws different inputs on every run and a failure reproduces with `--rng-seed <seed>`.
#pragma once

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace eagerlm::test {

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

}  // namespace eagerlm::test
