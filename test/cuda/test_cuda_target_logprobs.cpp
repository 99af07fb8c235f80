// The CUDA target_logprobs against the double reference (test/reference/target_logprobs.h), on
// fresh random inputs: GPT-2's vocabulary in one row, vocabularies across the 8192-id block edge,
// rows across the 256-row chunk, padded row strides, one-id vocabularies, logits in the hundreds,
// and targets outside the vocabulary (NaN, never read).
//
// Tolerance per row, first order, u = 2^-24, z the logits, M their maximum, p = softmax(z),
// B = min(vocab, kTargetLogprobBlock), n_b blocks, T = kTargetLogprobThreads:
//   cuBLAS's FP32 dot products: |δz_j| <= (d + 2)·u·Σ_i|h_i·w_ji| =: e_j, moving the result by at
//     most e_t + Σ_j p_j·e_j;
//   a term of S = Σ_j exp(z_j - M): z_j - m_b rounds (u·(m_b - z_j)), expf adds <= 2 ulp = 4u, the
//     block's sum (each thread ⌈B/T⌉ terms in turn, then a 10-level tree) (⌈B/T⌉ + 9)·u; the fold
//     that brings the block in and every later fold that raises the running maximum rescale it by
//     expf(old - new) (rounding u·(new - old), telescoping to <= u·(M - m_b), plus 4u, u for the
//     product and u for the sum each, at most n_b times). With M - m_b <= M - z_j, the relative
//     error of S is at most u·(2·Σ_j p_j·(M - z_j) + ⌈B/T⌉ + 13 + 6·n_b);
//   logf adds 2u·|log S|, z_t - M rounds (u·(M - z_t)), the final difference u·|out|.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cuda/cuda_ops.h"
#include "test/cuda/cuda_test_util.h"
#include "test/reference/target_logprobs.h"

namespace cuda = eagerlm::cuda;
namespace ref = eagerlm::reference;
using namespace eagerlm::cuda_test;

namespace {

struct Case {
  int64_t rows, d, vocab, h_pad;
  float scale;  // h in [-scale, scale], w in [-1, 1]
};

std::vector<double> cuda_bound(const std::vector<ref::TargetLogprob>& want, int64_t d, int64_t vocab) {
  const int64_t block = std::min<int64_t>(vocab, cuda::kTargetLogprobBlock);
  const double per_thread = double((block + cuda::kTargetLogprobThreads - 1) / cuda::kTargetLogprobThreads);
  const double n_blocks = double((vocab + cuda::kTargetLogprobBlock - 1) / cuda::kTargetLogprobBlock);
  std::vector<double> bound;
  for (const ref::TargetLogprob& t : want) {
    const double logits = double(d + 2) * kU * (t.abs_target + t.abs_mean);
    const double sum = kU * (2 * t.gap_mean + per_thread + 13 + 6 * n_blocks) + double(vocab) * std::ldexp(1.0, -125);
    const double rest = kU * (2 * std::abs(t.log_sum) + t.target_gap + std::abs(t.value));
    bound.push_back(eagerlm::test::kFirstOrderMargin * (logits + sum + rest));
  }
  return bound;
}

std::vector<float> run_cuda(cuda::CudaContext& ctx, const std::vector<float>& h, int64_t ldh,
                            const std::vector<float>& w, const std::vector<int32_t>& targets, int64_t rows, int64_t d,
                            int64_t vocab) {
  DeviceBuffer<float> dh(h), dw(w), dout(std::vector<float>(size_t(rows), kNaN));
  DeviceBuffer<int32_t> dt(targets);
  cuda::target_logprobs(ctx, dh.get(), ldh, dw.get(), dt.get(), dout.get(), rows, d, vocab);
  cuda::synchronize(ctx);
  return dout.download();
}

}  // namespace

TEST_CASE("cuda target_logprobs matches the double reference", "[cuda][target_logprobs]") {
  auto ctx = make_context();
  auto rng = test_rng(111);
  const Case cases[] = {{1, 64, 50257, 0, 1.0f}, {3, 17, 8191, 3, 1.0f},   {3, 17, 8192, 0, 1.0f},
                        {4, 33, 8193, 1, 1.0f},  {300, 48, 9000, 2, 1.0f}, {5, 769, 1, 0, 0.2f},
                        {2, 1, 5, 0, 4.0f},      {6, 48, 3000, 1, 40.0f}};
  for (const Case& c : cases) {
    INFO("rows=" << c.rows << " d=" << c.d << " vocab=" << c.vocab << " scale=" << c.scale);
    const int64_t ldh = c.d + c.h_pad;
    const auto h = random_floats(rng, size_t(c.rows * ldh), -c.scale, c.scale);
    const auto w = random_floats(rng, size_t(c.vocab * c.d), -1.0f, 1.0f);
    std::uniform_int_distribution<int32_t> id(0, int32_t(c.vocab - 1));
    std::vector<int32_t> targets(size_t(c.rows));
    for (auto& t : targets) t = id(rng);
    targets[0] = int32_t(c.vocab - 1);
    const auto got = run_cuda(*ctx, h, ldh, w, targets, c.rows, c.d, c.vocab);
    const auto want = ref::target_logprobs(h.data(), ldh, w.data(), targets.data(), c.rows, c.d, c.vocab);
    std::vector<double> values;
    for (const auto& t : want) values.push_back(t.value);
    eagerlm::test::check_within(got, values, cuda_bound(want, c.d, c.vocab));
  }
}

TEST_CASE("cuda target_logprobs gives NaN for a target outside the vocabulary", "[cuda][target_logprobs]") {
  auto ctx = make_context();
  auto rng = test_rng(112);
  const int64_t rows = 3, d = 8, vocab = 9000;
  const auto h = random_floats(rng, size_t(rows * d), -1.0f, 1.0f);
  const auto w = random_floats(rng, size_t(vocab * d), -1.0f, 1.0f);
  const std::vector<int32_t> targets = {-1, 8999, int32_t(vocab)};
  const auto got = run_cuda(*ctx, h, d, w, targets, rows, d, vocab);
  CHECK(std::isnan(got[0]));
  CHECK(std::isfinite(got[1]));
  CHECK(std::isnan(got[2]));
}
