// attention against the double reference: prefill (causal, several new tokens), decode (one new
// token after a long past), ragged batches (different past_len and n_new per sequence, a
// non-identity slot mapping, unused slots, rows not in sequence order), key counts at block
// boundaries (63, 64, 65, 128) and sequences reaching max_len, for the d_head = 64 fast path and a
// generic odd d_head. Every cache cell the kernel must not read holds NaN (past each sequence's
// length, unused slots), as do qkv's key/value columns and row padding, so any stray read that
// reaches the output shows up as a non-finite value; the caches end at an inaccessible page, so
// a read past a full last slot crashes. Output row padding must stay untouched.
//
// A BF16 or F16 cache is checked the same way: its halves are the cache, and the reference and
// the bound use their exact float32 values (the kernel widens exactly, so the same bound holds).
//
// Tolerance per output row and head, first order, u = 2^-24, L keys, B = ⌈L/64⌉ blocks, d = d_head:
//   scores: each is a float dot product of d terms of the scaled query, so
//           |δs_j| <= Δ = (d + 1)·u·scale·max_j Σ_c |q_c·k_jc|;
//   weights: exp(s_j - m) carries the logit error Δ, the rounding of s_j - m (<= R·u, R the score
//           range), exp's 2u, and each block's rescale exp(m_old - m_new) another (R·u total) plus
//           4u per block: relative error η = Δ + 2R·u + (4B + 3)·u per weight;
//   a relative error η on every weight moves the normalised average by <= 2η·V, V = max |v|;
//   accumulating L terms of Σ p·v and of Σ p costs <= L·u·V each, the final scaling 2u·V.
//   bound = V·(2η + (2L + 4)·u).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/common/dtype.h"
#include "kernels/cpu/cpu_ops.h"
#include "test/kernels/guarded_buffer.h"
#include "test/reference/attention.h"
#include "test/support/random.h"
#include "test/support/tolerance.h"

namespace ref = eagerlm::reference;
namespace test = eagerlm::test;
using eagerlm::KvLayout;
using eagerlm::StepBatch;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kSentinel = -4321.0f;

struct Seq {
  int32_t slot, past, n_new;
};

struct Case {
  int64_t n_slots, max_len, n_head, d_head;
  std::vector<Seq> seqs;
  float q_range = 1.0f;  // larger queries make the softmax peaky and the rescaling matter
};

// Bounds per output element from the comment at the top of the file.
std::vector<double> attention_bound(const std::vector<float>& qkv, int64_t ld_qkv, const StepBatch& batch,
                                    const KvLayout& layout, const float* k_cache, const float* v_cache, double scale) {
  const double u = test::kFloatEps;
  const int64_t d = layout.d_head, width = layout.n_head * d;
  std::vector<double> bound(size_t(batch.n_rows * width), 0.0);
  for (int32_t s = 0; s < batch.n_seq; ++s) {
    for (int64_t h = 0; h < layout.n_head; ++h) {
      const int64_t base = batch.slot[s] * layout.slot_stride + h * layout.head_stride;
      for (int64_t i = 0; i < batch.n_new[s]; ++i) {
        const int64_t row = batch.row_start[s] + i;
        const int64_t n_keys = batch.past_len[s] + i + 1;
        double max_abs_dot = 0.0, v_max = 0.0;
        double s_min = std::numeric_limits<double>::infinity(), s_max = -s_min;
        for (int64_t j = 0; j < n_keys; ++j) {
          double abs_dot = 0.0, dot = 0.0;
          for (int64_t c = 0; c < d; ++c) {
            const double q = qkv[row * ld_qkv + h * d + c];
            const double k = k_cache[base + j * d + c];
            abs_dot += std::abs(q * k);
            dot += q * k;
            v_max = std::max(v_max, double(std::abs(v_cache[base + j * d + c])));
          }
          max_abs_dot = std::max(max_abs_dot, abs_dot);
          s_min = std::min(s_min, scale * dot);
          s_max = std::max(s_max, scale * dot);
        }
        const double blocks = std::ceil(double(n_keys) / eagerlm::cpu::kAttentionBlock);
        const double eta = double(d + 1) * u * scale * max_abs_dot + 2 * (s_max - s_min) * u + (4 * blocks + 3) * u;
        const double b = test::kFirstOrderMargin * v_max * (2 * eta + double(2 * n_keys + 4) * u);
        for (int64_t c = 0; c < d; ++c) bound[size_t(row * width + h * d + c)] = b;
      }
    }
  }
  return bound;
}

// The half of v in a cache of `dtype` (BF16 or F16).
uint16_t to_half(float v, eagerlm::DType dtype) {
  return dtype == eagerlm::DType::kBF16 ? eagerlm::float_to_bf16(v) : eagerlm::float_to_f16(v);
}
float from_half(uint16_t h, eagerlm::DType dtype) {
  return dtype == eagerlm::DType::kBF16 ? eagerlm::bf16_to_float(h) : eagerlm::f16_to_float(h);
}

void run(const Case& tc, uint32_t salt, eagerlm::DType cache_type = eagerlm::DType::kF32) {
  auto rng = test::test_rng(salt);
  const KvLayout layout = eagerlm::kv_layout(tc.max_len, tc.n_head, tc.d_head, cache_type);
  const int64_t width = tc.n_head * tc.d_head;
  const int64_t ld_qkv = 3 * width + 5, ld_out = width + 3;

  // Rows in reverse sequence order: row_start is not the running sum in sequence order.
  const size_t n_seq = tc.seqs.size();
  std::vector<int32_t> slot(n_seq), row_start(n_seq), n_new(n_seq), past(n_seq);
  int32_t rows = 0;
  for (size_t s = n_seq; s-- > 0;) {
    row_start[s] = rows;
    rows += tc.seqs[s].n_new;
  }
  for (size_t s = 0; s < n_seq; ++s) {
    slot[s] = tc.seqs[s].slot;
    n_new[s] = tc.seqs[s].n_new;
    past[s] = tc.seqs[s].past;
  }
  StepBatch batch;
  batch.n_seq = int32_t(n_seq);
  batch.n_rows = rows;
  batch.slot = slot.data();
  batch.row_start = row_start.data();
  batch.n_new = n_new.data();
  batch.past_len = past.data();

  // Queries random; the key/value columns and the row padding of qkv NaN (never read).
  std::vector<float> qkv(size_t(rows * ld_qkv), kNaN);
  for (int64_t r = 0; r < rows; ++r) {
    const auto q = test::random_floats(rng, size_t(width), -tc.q_range, tc.q_range);
    std::copy(q.begin(), q.end(), qkv.begin() + r * ld_qkv);
  }

  // Caches all NaN and followed by a guard page; each sequence's cells at positions
  // < past + n_new random (the new tokens' keys, as kv_append would have left them).
  const size_t cache_size = size_t(tc.n_slots * layout.slot_stride);
  eagerlm::test::GuardedFloats k_cache(cache_size, kNaN), v_cache(cache_size, kNaN);
  for (const Seq& s : tc.seqs) {
    for (int64_t h = 0; h < tc.n_head; ++h) {
      const int64_t base = s.slot * layout.slot_stride + h * layout.head_stride;
      const auto keys = test::random_floats(rng, size_t((s.past + s.n_new) * tc.d_head), -1, 1);
      const auto values = test::random_floats(rng, keys.size(), -1.0f, 1.0f);
      std::copy(keys.begin(), keys.end(), k_cache.data() + base);
      std::copy(values.begin(), values.end(), v_cache.data() + base);
    }
  }

  const float scale = 1.0f / std::sqrt(float(tc.d_head));
  std::vector<float> out(size_t(rows * ld_out), kSentinel);
  if (cache_type == eagerlm::DType::kF32) {
    eagerlm::cpu::attention(qkv.data(), ld_qkv, batch, layout, k_cache.data(), v_cache.data(), scale, out.data(),
                            ld_out);
  } else {
    // The halves are the cache; the float caches become their exact values (NaN stays NaN).
    eagerlm::test::Guarded<uint16_t> k_half(cache_size, 0), v_half(cache_size, 0);
    for (size_t i = 0; i < cache_size; ++i) {
      k_half.data()[i] = to_half(k_cache.data()[i], cache_type);
      v_half.data()[i] = to_half(v_cache.data()[i], cache_type);
      k_cache.data()[i] = from_half(k_half.data()[i], cache_type);
      v_cache.data()[i] = from_half(v_half.data()[i], cache_type);
    }
    eagerlm::cpu::attention(qkv.data(), ld_qkv, batch, layout, k_half.data(), v_half.data(), scale, out.data(),
                            ld_out);
  }

  const auto want = ref::attention(qkv.data(), ld_qkv, batch, layout, k_cache.data(), v_cache.data(), scale);
  const auto bound = attention_bound(qkv, ld_qkv, batch, layout, k_cache.data(), v_cache.data(), scale);
  std::vector<float> got(size_t(rows * width));
  bool padding_intact = true;
  for (int64_t r = 0; r < rows; ++r) {
    std::copy_n(out.begin() + r * ld_out, width, got.begin() + r * width);
    for (int64_t c = width; c < ld_out; ++c) padding_intact &= out[r * ld_out + c] == kSentinel;
  }
  CHECK(padding_intact);
  test::check_within(got, want, bound);  // fails on any NaN that leaked in
}

}  // namespace

TEST_CASE("attention prefill is causal", "[kernels][attention]") {
  for (const int64_t d_head : {64, 17}) {
    INFO("d_head=" << d_head);
    run({1, 80, 3, d_head, {{0, 0, 70}}}, 81);          // from empty, crossing a block
    run({2, 128, 2, d_head, {{1, 30, 40}}}, 82);        // after a past, slot 0 unused
    run({1, 80, 2, d_head, {{0, 0, 1}}}, 83);           // a single token
    run({1, 200, 2, d_head, {{0, 5, 130}}, 4.0f}, 84);  // peaky scores, three blocks
  }
}

TEST_CASE("attention decode over a long past", "[kernels][attention]") {
  for (const int64_t d_head : {64, 17}) {
    INFO("d_head=" << d_head);
    run({1, 1024, 2, d_head, {{0, 1000, 1}}}, 91);
    run({3, 1024, 3, d_head, {{2, 1000, 1}, {0, 999, 1}, {1, 1, 1}}, 3.0f}, 92);
  }
}

TEST_CASE("attention over a ragged batch", "[kernels][attention]") {
  for (const int64_t d_head : {64, 17}) {
    INFO("d_head=" << d_head);
    // Slots 2 and 4 unused; one sequence without new tokens.
    run({6, 300, 3, d_head, {{3, 0, 7}, {0, 63, 1}, {5, 127, 2}, {1, 200, 1}, {2, 10, 0}}}, 101);
    run({4, 300, 2, d_head, {{1, 100, 20}, {3, 0, 64}, {0, 64, 65}}}, 102);
  }
}

TEST_CASE("attention at block boundaries and at max_len", "[kernels][attention]") {
  for (const int64_t d_head : {64, 17}) {
    INFO("d_head=" << d_head);
    // Key counts 63, 64, 65, 128, 129 for the single new token.
    run({5, 200, 2, d_head, {{0, 62, 1}, {1, 63, 1}, {2, 64, 1}, {3, 127, 1}, {4, 128, 1}}}, 111);
    // Prefill whose last rows straddle block boundaries.
    run({2, 200, 2, d_head, {{1, 60, 8}, {0, 120, 9}}}, 112);
    // Sequences filling their slot to max_len; the last slot's end is the guard page.
    run({2, 128, 2, d_head, {{0, 64, 64}, {1, 127, 1}}}, 113);
    run({1, 65, 3, d_head, {{0, 0, 65}}}, 114);
    run({1, 100, 2, d_head, {{0, 99, 1}}}, 115);
  }
}

TEST_CASE("attention over a BF16 or F16 cache", "[kernels][attention]") {
  for (const auto dtype : {eagerlm::DType::kBF16, eagerlm::DType::kF16}) {
    for (const int64_t d_head : {64, 17}) {
      INFO(eagerlm::dtype_size(dtype) << "-byte " << (dtype == eagerlm::DType::kBF16 ? "BF16" : "F16")
                                      << " cache, d_head=" << d_head);
      run({1, 200, 2, d_head, {{0, 5, 130}}, 4.0f}, 121, dtype);  // prefill, peaky scores
      run({3, 1024, 3, d_head, {{2, 1000, 1}, {0, 999, 1}, {1, 1, 1}}, 3.0f}, 122, dtype);  // decode
      run({2, 128, 2, d_head, {{0, 64, 64}, {1, 127, 1}}}, 123, dtype);  // to max_len, the guard page
    }
  }
}
