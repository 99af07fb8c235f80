// Helpers shared by the sampling tests on the CPU (test/generation/test_sampling_thresholds.cpp)
// and on the GPU (test/cuda/test_cuda_sampling.cpp): random logits, the test for a cut that
// float rounding may legitimately move, and the chi-square statistic with its acceptance bound.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "engine/generation/sampling.h"

namespace eagerlm::test {

inline std::vector<float> random_logits(std::mt19937& rng, size_t n, float sigma, bool integer_ties) {
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(n);
  for (auto& x : v) x = integer_ties ? std::round(d(rng)) : d(rng);
  return v;
}

// Whether the CPU's own decision at its cut is within `tol` of flipping: cumulative mass (in
// sorted order, over the top-k set) at the last two positions against top_p, or the boundary
// tokens' p / p_max against min_p. Only there may float rounding move the cut by a token.
inline bool cut_is_ambiguous(const std::vector<float>& penalized_logits, const SamplingOptions& o,
                             const std::vector<std::pair<int32_t, double>>& cpu, double tol) {
  std::vector<int32_t> order(penalized_logits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = int32_t(i);
  const auto& l = penalized_logits;
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return l[size_t(a)] > l[size_t(b)]; });
  size_t keep = order.size();
  if (o.top_k > 0 && size_t(o.top_k) < keep) keep = size_t(o.top_k);
  std::vector<long double> p(keep);
  long double z = 0;
  for (size_t i = 0; i < keep; ++i)
    z += p[i] = std::exp((long double)(l[size_t(order[i])] - l[size_t(order[0])]) / o.temperature);
  const size_t k = cpu.size();
  long double cum = 0;
  for (size_t i = 0; i < keep; ++i) {
    cum += p[i] / z;
    if ((i + 2 == k || i + 1 == k) && o.top_p < 1.0f && std::fabs(double(cum) - o.top_p) < tol) return true;
  }
  for (size_t i = k > 0 ? k - 1 : 0; i < std::min(keep, k + 1); ++i)
    if (o.min_p > 0.0f && std::fabs(double(p[i] / p[0]) - o.min_p) < tol) return true;
  return false;
}

// Chi-square bound at the 1 - 1e-6 quantile (Wilson-Hilferty, z = 4.75): a correct sampler
// fails it about once in a million runs; a wrong distribution over these bins overshoots by far.
inline double chi2_bound(double df) {
  const double z = 4.75;
  return df * std::pow(1 - 2 / (9 * df) + z * std::sqrt(2 / (9 * df)), 3);
}

// Pearson's chi-square of `counts` (draws per token id) against `n` draws from the candidates'
// probabilities; tokens expected fewer than 5 times are pooled into one bin. Each counted id
// the candidates hold is erased from `counts`, so ids left there were drawn but never allowed.
struct ChiSquare {
  double statistic = 0;
  int bins = 0;
};
template <typename Count>
ChiSquare chi_square(std::map<int32_t, Count>& counts, const std::vector<std::pair<int32_t, double>>& candidates,
                     double n) {
  ChiSquare r;
  double small_expected = 0, small_observed = 0;
  for (const auto& [id, p] : candidates) {
    const double expected = p * n, observed = counts.count(id) ? double(counts[id]) : 0.0;
    counts.erase(id);
    if (expected < 5) {
      small_expected += expected;
      small_observed += observed;
      continue;
    }
    r.statistic += (observed - expected) * (observed - expected) / expected;
    ++r.bins;
  }
  if (small_expected > 0) {
    r.statistic += (small_observed - small_expected) * (small_observed - small_expected) / small_expected;
    ++r.bins;
  }
  return r;
}

}  // namespace eagerlm::test
