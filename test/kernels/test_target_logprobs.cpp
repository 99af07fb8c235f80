// target_logprobs against the double reference: one row and many (across the kernel's row
// blocks), vocabularies of one id, of one block, and across block edges (511, 512, 513, 1025),
// padded row strides, logits in the hundreds (exp would overflow without the maxima), inputs that
// end at an inaccessible page, and the same bits on any number of threads.
//
// Tolerance per row, first order, u = 2^-24, z the logits, M their maximum, p = softmax(z),
// B = kTargetLogprobBlock (the most terms one block sums), n_b the number of blocks:
//   each logit is a float dot product of d terms: |δz_j| <= (d + 2)·u·Σ_i|h_i·w_ji| =: e_j, which
//     moves the result by at most e_t + Σ_j p_j·e_j (∂out/∂z_j = [j = t] - p_j);
//   S = Σ_j exp(z_j - M) is computed in two levels: within a block z_j - m_b rounds (u·(m_b - z_j)
//     relative in its term), vec_exp adds 2u, the sum of <= B terms (B - 1)·u; across blocks
//     m_b - M rounds (u·(M - m_b)), expf adds 2u, the product u, the sum (n_b - 1)·u. With
//     (m_b - z_j) + (M - m_b) = M - z_j, the relative error of S is at most
//     ε_S = u·(2·Σ_j p_j·(M - z_j) + B + n_b + 3) + vocab·2^-125 (exp flushing results below
//     2^-126 to 0, against S >= 1);
//   log S adds ε_S plus 2u·|log S| (logf), z_t - M rounds (u·(M - z_t)), the final difference
//     u·|out|.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/common/openmp.h"
#include "kernels/cpu/cpu_ops.h"
#include "test/kernels/guarded_buffer.h"
#include "test/reference/target_logprobs.h"
#include "test/support/random.h"
#include "test/support/tolerance.h"

namespace cpu = eagerlm::cpu;
namespace ref = eagerlm::reference;
namespace test = eagerlm::test;

namespace {

constexpr float kSentinel = 12345.0f;

struct Case {
  int64_t rows, d, vocab, h_pad;
  float scale;  // h in [-scale, scale], w in [-1, 1]
};

std::vector<double> logprob_bound(const std::vector<ref::TargetLogprob>& want, int64_t d, int64_t vocab) {
  const double u = test::kFloatEps;
  const double block = double(std::min<int64_t>(vocab, cpu::kTargetLogprobBlock));
  const double n_blocks = double((vocab + cpu::kTargetLogprobBlock - 1) / cpu::kTargetLogprobBlock);
  std::vector<double> bound;
  for (const ref::TargetLogprob& t : want) {
    const double logits = double(d + 2) * u * (t.abs_target + t.abs_mean);
    const double sum = u * (2 * t.gap_mean + block + n_blocks + 3) + double(vocab) * std::ldexp(1.0, -125);
    const double rest = u * (2 * std::abs(t.log_sum) + t.target_gap + std::abs(t.value));
    bound.push_back(test::kFirstOrderMargin * (logits + sum + rest));
  }
  return bound;
}

std::vector<int32_t> random_targets(std::mt19937& rng, int64_t rows, int64_t vocab) {
  std::uniform_int_distribution<int32_t> id(0, int32_t(vocab - 1));
  std::vector<int32_t> t(static_cast<size_t>(rows));
  for (auto& v : t) v = id(rng);
  t[0] = int32_t(vocab - 1);  // the last id of the last (partial) block
  if (rows > 1) t[1] = 0;
  return t;
}

// Runs the kernel on guarded copies of h and w; returns out[0, rows) and checks the element after
// them was not written.
std::vector<float> run_kernel(const std::vector<float>& h, int64_t ldh, const std::vector<float>& w,
                              const std::vector<int32_t>& targets, int64_t rows, int64_t d, int64_t vocab) {
  test::GuardedFloats gh(h.size(), 0.0f), gw(w.size(), 0.0f);
  std::copy(h.begin(), h.end(), gh.data());
  std::copy(w.begin(), w.end(), gw.data());
  std::vector<float> out(size_t(rows) + 1, std::numeric_limits<float>::quiet_NaN());
  out.back() = kSentinel;
  cpu::target_logprobs(gh.data(), ldh, gw.data(), targets.data(), out.data(), rows, d, vocab);
  CHECK(out.back() == kSentinel);
  out.pop_back();
  return out;
}

void check_case(std::mt19937& rng, const Case& c) {
  INFO("rows=" << c.rows << " d=" << c.d << " vocab=" << c.vocab << " ldh=" << c.d + c.h_pad << " scale=" << c.scale);
  const int64_t ldh = c.d + c.h_pad;
  // The last row ends at the end of h (no padding after it), so a read past it faults.
  const auto h = test::random_floats(rng, size_t((c.rows - 1) * ldh + c.d), -c.scale, c.scale);
  const auto w = test::random_floats(rng, size_t(c.vocab * c.d), -1.0f, 1.0f);
  const auto targets = random_targets(rng, c.rows, c.vocab);
  const auto got = run_kernel(h, ldh, w, targets, c.rows, c.d, c.vocab);
  const auto want = ref::target_logprobs(h.data(), ldh, w.data(), targets.data(), c.rows, c.d, c.vocab);
  std::vector<double> values;
  for (const auto& t : want) values.push_back(t.value);
  test::check_within(got, values, logprob_bound(want, c.d, c.vocab));
}

}  // namespace

TEST_CASE("target_logprobs matches the double reference", "[kernels][target_logprobs]") {
  auto rng = test::test_rng(81);
  for (const int64_t vocab : {1, 5, 511, 512, 513, 1025}) {
    for (const Case& shape : {Case{1, 17, 0, 0, 1.0f}, Case{3, 64, 0, 5, 1.0f}, Case{515, 33, 0, 2, 1.0f},
                              Case{7, 769, 0, 0, 0.2f}, Case{2, 1, 0, 0, 4.0f}}) {
      Case c = shape;
      c.vocab = vocab;
      check_case(rng, c);
    }
  }
}

TEST_CASE("target_logprobs stays finite and exact for logits in the hundreds", "[kernels][target_logprobs]") {
  // |h·w| reaches several hundred: exp of a raw logit would overflow float at 88.7.
  auto rng = test::test_rng(82);
  for (const int64_t vocab : {3, 1500}) check_case(rng, Case{5, 48, vocab, 1, 40.0f});
}

TEST_CASE("target_logprobs gives NaN for a target outside the vocabulary and reads nothing for it",
          "[kernels][target_logprobs]") {
  auto rng = test::test_rng(83);
  const int64_t rows = 4, d = 16, vocab = 1100;
  const auto h = test::random_floats(rng, size_t(rows * d), -1.0f, 1.0f);
  const auto w = test::random_floats(rng, size_t(vocab * d), -1.0f, 1.0f);
  const std::vector<int32_t> targets = {-1, 7, int32_t(vocab), 1099};
  const auto got = run_kernel(h, d, w, targets, rows, d, vocab);
  CHECK(std::isnan(got[0]));
  CHECK(std::isnan(got[2]));
  const auto want = ref::target_logprobs(h.data() + d, d, w.data(), targets.data() + 1, 1, d, vocab);
  CHECK(std::abs(got[1] - want[0].value) <= logprob_bound(want, d, vocab)[0]);
  CHECK(std::isfinite(got[3]));
}

TEST_CASE("target_logprobs gives the same bits on any number of threads", "[kernels][target_logprobs]") {
  auto rng = test::test_rng(84);
  const int64_t rows = 600, d = 32, vocab = 2600;  // 6 blocks x 2 row blocks: 12 tasks
  const auto h = test::random_floats(rng, size_t(rows * d), -1.0f, 1.0f);
  const auto w = test::random_floats(rng, size_t(vocab * d), -1.0f, 1.0f);
  const auto targets = random_targets(rng, rows, vocab);
  const int before = omp_get_max_threads();
  std::vector<std::vector<float>> outs;
  for (const int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    outs.push_back(run_kernel(h, d, w, targets, rows, d, vocab));
  }
  omp_set_num_threads(before);
  test::check_identical(outs[1], outs[0]);
  test::check_identical(outs[2], outs[0]);
}

TEST_CASE("target_logprobs of no rows writes nothing", "[kernels][target_logprobs]") {
  const float h = 1.0f, w = 1.0f;
  const int32_t t = 0;
  float out = kSentinel;
  cpu::target_logprobs(&h, 1, &w, &t, &out, 0, 1, 1);
  CHECK(out == kSentinel);
}
