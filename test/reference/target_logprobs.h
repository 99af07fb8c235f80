// Double-precision reference for target_logprobs: out[r] = z[t] - log Σ_j exp(z[j]) with
// z = h[r] · wᵀ computed in double from the float inputs, together with the quantities that the
// tests' first-order error bounds are made of.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace eagerlm::reference {

struct TargetLogprob {
  double value = 0;       // log softmax(z)[t]
  double abs_target = 0;  // Σ_i |h_i·w_ti|: scales the rounding error of the target's logit
  double abs_mean = 0;    // Σ_j p_j·Σ_i |h_i·w_ji|: the same for the other logits, weighted as they enter
  double gap_mean = 0;    // Σ_j p_j·(max - z_j)
  double target_gap = 0;  // max - z_t
  double log_sum = 0;     // log Σ_j exp(z_j - max)
};

// Bounds, in units of u = 2^-24, on the rounding a fused log-softmax adds to one row beyond its
// logits' own errors, from the row's vocabulary size and logit spread (max z - min z) alone: the
// kernel tests' first-order bounds with Σ_j p_j·(M - z_j) and M - z_t at most the spread,
// log S in [0, ln vocab] and |out| at most spread + ln vocab (plus 1 for exp's underflow).
// The CPU kernel sums blocks of `block` ids, then the blocks (test/kernels/test_target_logprobs.cpp).
inline double cpu_logprob_rounding(int64_t vocab, double spread, int64_t block) {
  const double terms = double(std::min(vocab, block)), blocks = double((vocab + block - 1) / block);
  return terms + blocks + 3 + 4 * spread + 3 * std::log(double(vocab)) + 1;
}
// The CUDA kernel reduces blocks of `block` ids with `threads` threads, folding them into a
// running sum (test/cuda/test_cuda_target_logprobs.cpp).
inline double cuda_logprob_rounding(int64_t vocab, double spread, int64_t block, int64_t threads) {
  const int64_t terms = std::min(vocab, block);
  const double per_thread = double((terms + threads - 1) / threads), blocks = double((vocab + block - 1) / block);
  return per_thread + 13 + 6 * blocks + 4 * spread + 3 * std::log(double(vocab)) + 1;
}

inline std::vector<TargetLogprob> target_logprobs(const float* h, int64_t ldh, const float* w, const int32_t* targets,
                                                  int64_t rows, int64_t d, int64_t vocab) {
  std::vector<TargetLogprob> out(static_cast<size_t>(rows));
  std::vector<double> z(static_cast<size_t>(vocab)), a(static_cast<size_t>(vocab));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < vocab; ++j) {
      double sum = 0, abs_sum = 0;
      for (int64_t i = 0; i < d; ++i) {
        const double p = double(h[r * ldh + i]) * double(w[j * d + i]);
        sum += p;
        abs_sum += std::abs(p);
      }
      z[size_t(j)] = sum;
      a[size_t(j)] = abs_sum;
    }
    const double max = *std::max_element(z.begin(), z.end());
    double s = 0;
    for (double v : z) s += std::exp(v - max);
    TargetLogprob& o = out[size_t(r)];
    for (int64_t j = 0; j < vocab; ++j) {
      const double p = std::exp(z[size_t(j)] - max) / s;
      o.abs_mean += p * a[size_t(j)];
      o.gap_mean += p * (max - z[size_t(j)]);
    }
    const size_t t = size_t(targets[r]);
    o.log_sum = std::log(s);
    o.value = (z[t] - max) - o.log_sum;
    o.abs_target = a[t];
    o.target_gap = max - z[t];
  }
  return out;
}

}  // namespace eagerlm::reference
