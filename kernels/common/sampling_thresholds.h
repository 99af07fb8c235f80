// The arithmetic of device-side sampling (kernels/cuda/sample.cu), written once for the host
// and the device so that the CPU tests run the very decision logic the kernel runs.
//
// The filters of engine/generation/sampling.h (HF order: repetition penalty, temperature, top-k,
// top-p, min-p) keep a prefix of the tokens sorted by logit descending, ties by id ascending.
// Instead of sorting, the kernel describes that prefix as a Cut: every token whose key (an
// order-preserving 32-bit image of its logit) is above cut.key, plus the first cut.ties tokens
// (in id order) whose key equals cut.key. The cut's key is found by a descent over the 32 key
// bits, two bits per round (KeyDescent), asking a Row for counts (top-k) or probability masses
// (top-p) of the tokens at or above three candidate keys; the Row runs those passes (a CUDA
// block, or a plain loop in the tests). Masses are integers (exp in fixed point), so every sum is
// exact and independent of the order of addition: the result is deterministic on any device.
//
// Ties at the top-k threshold (tokens with exactly the k-th largest logit): the lowest ids are
// kept, exactly k tokens in all, as the CPU's sort does. The same holds for the top-p cut.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/common/host_device.h"

namespace eagerlm::sampling {

// Order-preserving key of a logit: a < b (as floats) exactly when key(a) < key(b), and -0 has
// the key of +0 (they compare equal). NaN gets 0, below every number (-inf included), so a NaN
// is never the argmax and never kept (the CPU's behaviour with NaN logits is unspecified).
EAGERLM_HOST_DEVICE inline uint32_t logit_key(float v) {
  if (v != v) return 0u;
  if (v == 0.0f) v = 0.0f;
  uint32_t bits;
#if defined(__CUDA_ARCH__)
  bits = __float_as_uint(v);
#else
  std::memcpy(&bits, &v, sizeof bits);
#endif
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

// The logit of a key (+0 for the key of ±0; a NaN for key 0).
EAGERLM_HOST_DEVICE inline float key_logit(uint32_t key) {
  const uint32_t bits = (key & 0x80000000u) ? (key & 0x7FFFFFFFu) : ~key;
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
#endif
}

// The HF (CTRL) repetition penalty of one seen token, bit for bit as apply_repetition_penalty:
// correctly rounded division or product whatever the compiler flags (no fast-math reciprocal).
EAGERLM_HOST_DEVICE inline float penalized(float logit, float penalty) {
#if defined(__CUDA_ARCH__)
  return logit > 0.0f ? __fdiv_rn(logit, penalty) : __fmul_rn(logit, penalty);
#else
  return logit > 0.0f ? logit / penalty : logit * penalty;
#endif
}

// Fixed-point unit of the masses: 2^(63 - bit width of vocab) per unit of weight. A weight is at
// most 1 (the top token's), so a whole row sums to below 2^63.
inline double mass_scale(int64_t vocab) {
  int width = 0;
  for (uint64_t v = uint64_t(vocab > 0 ? vocab : 1); v != 0; v >>= 1) ++width;
  return std::ldexp(1.0, 63 - width);
}

// The options of one sampling call, derived once on the host.
struct Rule {
  int64_t vocab = 0;
  bool greedy = true;            // temperature 0: argmax, lowest id among ties
  double inv_temperature = 1.0;  // 1 / T
  int32_t top_k = 0;             // active when 0 < top_k < vocab
  float top_p = 1.0f;            // active when < 1
  bool use_min_p = false;        // min_p > 0
  double log_min_p = 0.0;        // keep x >= log(min_p), x = (l - l_max) / T
  float repetition_penalty = 1.0f;
  double mass_scale = 1.0;
};

inline Rule make_rule(int64_t vocab, float temperature, int32_t top_k, float top_p, float min_p,
                      float repetition_penalty) {
  Rule r;
  r.vocab = vocab;
  r.greedy = temperature == 0.0f;
  r.inv_temperature = r.greedy ? 1.0 : 1.0 / double(temperature);
  r.top_k = top_k;
  r.top_p = top_p;
  r.use_min_p = min_p > 0.0f;
  r.log_min_p = r.use_min_p ? std::log(double(min_p)) : 0.0;
  r.repetition_penalty = repetition_penalty;
  r.mass_scale = mass_scale(vocab);
  return r;
}

// Probabilities at temperature T relative to the top token (which gets weight 1), in fixed point.
struct Weigher {
  float max_logit = 0.0f;  // the (penalized) maximum; finite whenever tokens are drawn
  double inv_temperature = 1.0;
  double scale = 1.0;
  bool use_min_p = false;
  double log_min_p = 0.0;

  // x = (l - l_max) / T <= 0, the log of the token's weight; the difference is exact in double.
  EAGERLM_HOST_DEVICE double exponent(float logit) const {
    return (double(logit) - double(max_logit)) * inv_temperature;
  }
  // exp(x)·scale, truncated. expf of the float-rounded x, corrected for that rounding
  // (exp(x) = exp(xf)·exp(x - xf) ≈ exp(xf)·(1 + x - xf)), keeps the relative error at expf's
  // few ulps whatever |x|. NaN weighs 0.
  EAGERLM_HOST_DEVICE uint64_t weight(float logit) const {
    const double x = exponent(logit);
    if (!(x <= 0.0) || x < -150.0) return 0;  // NaN, or below float's smallest exp
    const float xf = float(x);
#if defined(__CUDA_ARCH__)
    const float e = expf(xf);
#else
    const float e = std::exp(xf);
#endif
    double w = double(e) * (1.0 + (x - double(xf)));
    if (w > 1.0) w = 1.0;
    return uint64_t(w * scale);
  }
  EAGERLM_HOST_DEVICE uint64_t weight_of_key(uint32_t key) const { return weight(key_logit(key)); }
  // min-p: p >= min_p · p_max, i.e. x >= log(min_p); the top token always passes.
  EAGERLM_HOST_DEVICE bool passes_min_p(float logit) const { return !use_min_p || exponent(logit) >= log_min_p; }
};

// Largest t in [0, 2^32) with pred(t), for pred non-increasing in t and true at 0: two bits per
// round, pred asked at the three candidates prefix + j·2^shift (j = 1, 2, 3); 16 rounds.
struct KeyDescent {
  uint32_t prefix = 0;
  int shift = 30;
  EAGERLM_HOST_DEVICE bool done() const { return shift < 0; }
  EAGERLM_HOST_DEVICE uint32_t candidate(int j) const { return prefix + (uint32_t(j) << shift); }
  // j: the largest candidate at which pred holds (0: none of them).
  EAGERLM_HOST_DEVICE void advance(int j) {
    if (j > 0) prefix = candidate(j);
    shift -= 2;
  }
};

// The kept prefix (see the top of this file). {0, 0} keeps every token but NaNs.
struct Cut {
  uint32_t key = 0;
  uint64_t ties = 0;
};

// What a Row reports about one threshold key t.
struct LevelStats {
  uint64_t count_gt = 0;  // tokens with key > t
  uint64_t mass_gt = 0;   // their weight
  uint64_t count_eq = 0;  // tokens with key == t
};

// Smallest j in [1, group] with mass_gt + j·w >= tau (group when none reaches it: with rounding
// the mass may fall short of tau, and then the CPU keeps everything too).
EAGERLM_HOST_DEVICE inline uint64_t ties_to_reach(uint64_t mass_gt, uint64_t w, uint64_t group, double tau) {
  if (group == 0) return 0;
  uint64_t lo = 1, hi = group;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (double(mass_gt + mid * w) >= tau)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

// Whether a token is kept: above the cut, or one of the first cut.ties tokens at its key
// (tie_rank: tokens with that key and a lower id), and not removed by min-p.
EAGERLM_HOST_DEVICE inline bool is_kept(uint32_t key, uint64_t tie_rank, const Cut& cut, bool passes_min_p) {
  return passes_min_p && (key > cut.key || (key == cut.key && tie_rank < cut.ties));
}

#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
// The cut of top-k and then top-p (min-p is a per-token test, is_kept's last argument). Row:
//   void count_ge(const uint32_t c[3], uint64_t n[3]);  n[j] = #tokens with key >= c[j]
//   void mass_ge(const uint32_t c[3], uint32_t floor_key, uint64_t m[3]);
//       m[j] = weight of the tokens with key > floor_key and key >= c[j]
//   LevelStats stats_at(uint32_t t);
// Every call must give every caller the same answer (on a GPU: every thread of the block).
template <class Row>
EAGERLM_HOST_DEVICE Cut find_cut(Row& row, const Rule& rule, const Weigher& weigher) {
  Cut cut;
  uint64_t kept_mass = 0;
  uint32_t c[3];
  if (rule.top_k > 0 && int64_t(rule.top_k) < rule.vocab) {
    // top-k: the k-th largest key is the largest t with count(key >= t) >= k.
    const uint64_t k = uint64_t(rule.top_k);
    KeyDescent d;
    while (!d.done()) {
      uint64_t n[3];
      for (int j = 0; j < 3; ++j) c[j] = d.candidate(j + 1);
      row.count_ge(c, n);
      int j = 0;
      while (j < 3 && n[j] >= k) ++j;
      d.advance(j);
    }
    const LevelStats s = row.stats_at(d.prefix);
    cut.key = d.prefix;
    cut.ties = k - s.count_gt;  // count_gt < k <= count_gt + count_eq
    kept_mass = s.mass_gt + cut.ties * weigher.weight_of_key(cut.key);
  } else {
    kept_mass = row.stats_at(0).mass_gt;
  }
  if (rule.top_p < 1.0f) {
    // top-p over what top-k kept: the cut's key is the largest t whose mass at or above it
    // reaches tau = top_p · kept mass; then as many of the tokens at t as reaching tau needs.
    // (It is never below the top-k key: the whole top-k set reaches tau.)
    const double tau = double(rule.top_p) * double(kept_mass);
    const uint64_t floor_mass = cut.ties * weigher.weight_of_key(cut.key);
    KeyDescent d;
    while (!d.done()) {
      uint64_t m[3];
      for (int j = 0; j < 3; ++j) c[j] = d.candidate(j + 1);
      row.mass_ge(c, cut.key, m);
      for (int j = 0; j < 3; ++j)
        if (c[j] <= cut.key) m[j] += floor_mass;
      int j = 0;
      while (j < 3 && double(m[j]) >= tau) ++j;
      d.advance(j);
    }
    const LevelStats s = row.stats_at(d.prefix);
    const uint64_t group = d.prefix == cut.key ? cut.ties : s.count_eq;
    cut.ties = ties_to_reach(s.mass_gt, weigher.weight_of_key(d.prefix), group, tau);
    cut.key = d.prefix;
  }
  return cut;
}

}  // namespace eagerlm::sampling
