// Device sampling (kernels/cuda/sample.cu) against the host Sampler, the reference: greedy ids
// bit for bit (ties included), kept sets equal to Sampler::candidates, draws following the kept
// probabilities, reproducibility, the repetition penalty and its per-slot history, logprobs, and
// the Philox stream against cuRAND's own. (Whole-model generation with device sampling is in
// test_cuda_generation.cpp.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "cuda_test_util.h"
#include "engine/generation/sampling.h"
#include "kernels/common/kernel_error.h"
#include "kernels/common/sampling_philox.h"
#include "kernels/cuda/cuda_sampling.h"
#include "test/generation/sampling_test_support.h"

using namespace eagerlm;
using namespace eagerlm::cuda_test;

using eagerlm::test::chi2_bound;
using eagerlm::test::chi_square;
using eagerlm::test::ChiSquare;
using eagerlm::test::cut_is_ambiguous;
using eagerlm::test::random_logits;

namespace {

// Temperature, top-k, top-p, min-p, repetition penalty and seed; the other processors off.
SamplingOptions filters(float temperature, int32_t top_k, float top_p, float min_p, float repetition_penalty,
                        uint64_t seed) {
  SamplingOptions o;
  o.temperature = temperature;
  o.top_k = top_k;
  o.top_p = top_p;
  o.min_p = min_p;
  o.repetition_penalty = repetition_penalty;
  o.seed = seed;
  return o;
}

constexpr float kInf = std::numeric_limits<float>::infinity();

cuda::SampleParams params_of(const SamplingOptions& o, bool logprobs = false) { return sample_params(o, logprobs); }

// One sample_rows call: logits [n_rows, vocab] (row-major), one row description each, the fed
// tokens, an optional persistent presence table; returns the results and the kept masks.
struct Call {
  std::vector<cuda::SampleResult> results;
  std::vector<uint8_t> kept;
};

Call run(cuda::CudaContext& ctx, const std::vector<float>& logits, int64_t vocab,
         const std::vector<cuda::SampleRow>& rows, const std::vector<int32_t>& tokens, DeviceBuffer<uint8_t>* presence,
         int64_t n_slots, const cuda::SampleParams& p, bool want_kept) {
  const int64_t n_rows = int64_t(rows.size());
  DeviceBuffer<float> d_logits(logits);
  DeviceBuffer<cuda::SampleRow> d_rows(rows);
  DeviceBuffer<int32_t> d_tokens(tokens);
  DeviceBuffer<cuda::SampleResult> d_out{std::vector<cuda::SampleResult>(size_t(n_rows))};
  DeviceBuffer<uint8_t> d_kept{std::vector<uint8_t>(want_kept ? size_t(n_rows * vocab) : 0, 7)};
  cuda::sample_rows(ctx, d_logits.get(), vocab, n_rows, vocab, d_rows.get(), d_tokens.get(),
                    presence ? presence->get() : nullptr, presence ? n_slots : 0, p, d_out.get(),
                    want_kept ? d_kept.get() : nullptr);
  cuda::synchronize(ctx);
  return {d_out.download(), want_kept ? d_kept.download() : std::vector<uint8_t>{}};
}

// A row that restarts slot `slot` with `n_tokens` tokens starting at `begin`.
cuda::SampleRow row_of(int32_t slot, int32_t begin, int32_t n_tokens, uint64_t stream = 0, uint64_t draw = 0) {
  cuda::SampleRow r;
  r.stream = stream;
  r.draw = draw;
  r.slot = slot;
  r.restart = 1;
  r.token_begin = begin;
  r.n_tokens = n_tokens;
  r.wanted = 1;
  return r;
}

const size_t kVocabs[] = {1, 7, 1000, 50257};

// Seen tokens of row r for the penalty tests: a few ids, repeated, out of order.
std::vector<int32_t> seen_tokens(std::mt19937& rng, size_t vocab, size_t count) {
  std::vector<int32_t> t;
  for (size_t i = 0; i < count; ++i) t.push_back(int32_t(rng() % vocab));
  if (!t.empty()) t.push_back(t.front());
  return t;
}

}  // namespace

TEST_CASE("cuda greedy sampling is the cpu argmax bit for bit, ties and penalty included", "[cuda][sampling]") {
  auto ctx = make_context();
  auto rng = test_rng(301);
  for (size_t vocab : kVocabs) {
    for (float penalty : {1.0f, 1.4f}) {
      // Three rows: normal, integer (many ties), and one with ±0 / -inf extremes.
      std::vector<float> logits;
      for (int r = 0; r < 3; ++r) {
        auto row = random_logits(rng, vocab, 2.0f, r != 0);
        if (r == 2) {
          for (auto& x : row) x = x > 0 ? -0.0f : (x < -1 ? -kInf : 0.0f);
        }
        logits.insert(logits.end(), row.begin(), row.end());
      }
      std::vector<cuda::SampleRow> rows;
      std::vector<int32_t> tokens;
      std::vector<std::vector<int32_t>> seen;
      for (int r = 0; r < 3; ++r) {
        seen.push_back(seen_tokens(rng, vocab, std::min<size_t>(vocab, 20)));
        rows.push_back(row_of(r, int32_t(tokens.size()), int32_t(seen.back().size())));
        tokens.insert(tokens.end(), seen.back().begin(), seen.back().end());
      }
      DeviceBuffer<uint8_t> presence{std::vector<uint8_t>(3 * vocab, 1)};  // restart clears it
      SamplingOptions o;
      o.repetition_penalty = penalty;
      const Call c = run(*ctx, logits, int64_t(vocab), rows, tokens, &presence, 3, params_of(o), true);
      for (int r = 0; r < 3; ++r) {
        std::vector<float> want(logits.begin() + long(r * vocab), logits.begin() + long((r + 1) * vocab));
        apply_repetition_penalty(want.data(), int64_t(vocab), seen[size_t(r)], penalty);
        INFO("vocab " << vocab << " penalty " << penalty << " row " << r);
        const int32_t id = argmax(want.data(), int64_t(vocab));
        CHECK(c.results[size_t(r)].id == id);
        for (size_t i = 0; i < vocab; ++i) REQUIRE(c.kept[size_t(r) * vocab + i] == (int32_t(i) == id ? 1 : 0));
      }
    }
  }
}

// The kept mask against Sampler::candidates, over several option sets, penalties and shapes;
// identical except where the CPU's own cut is within 1e-6 of flipping (counted, must be rare).
// Tie behaviour: at the top-k (and top-p) threshold the lowest ids are kept, as the CPU's sort.
TEST_CASE("cuda kept sets equal Sampler::candidates", "[cuda][sampling]") {
  auto ctx = make_context();
  auto rng = test_rng(302);
  const SamplingOptions sets[] = {
      filters(1.0f, 0, 1.0f, 0.0f, 1.0f, 1),   filters(0.7f, 50, 1.0f, 0.0f, 1.0f, 2), filters(1.3f, 0, 0.9f, 0.0f, 1.0f, 3),
      filters(1.0f, 40, 0.8f, 0.05f, 1.0f, 4), filters(0.5f, 0, 1.0f, 0.1f, 1.0f, 5),  filters(1.0f, 5, 0.5f, 0.0f, 1.3f, 6),
      filters(2.0f, 0, 0.99f, 0.0f, 0.8f, 7),  filters(1.0f, 3, 1.0f, 0.0f, 1.0f, 8),  filters(1.0f, 0, 0.3f, 1.0f, 1.0f, 9),
  };
  int compared = 0, excused = 0;
  for (size_t vocab : kVocabs) {
    std::vector<float> logits;
    std::vector<cuda::SampleRow> rows;
    std::vector<int32_t> tokens;
    std::vector<std::vector<int32_t>> seen;
    for (int r = 0; r < 3; ++r) {  // peaked, flat, tie-heavy
      auto row = random_logits(rng, vocab, r == 1 ? 0.5f : 3.0f, r == 2);
      if (vocab > 7) row[vocab / 3] = -kInf;
      logits.insert(logits.end(), row.begin(), row.end());
      seen.push_back(seen_tokens(rng, vocab, std::min<size_t>(vocab, 30)));
      rows.push_back(row_of(r, int32_t(tokens.size()), int32_t(seen.back().size())));
      tokens.insert(tokens.end(), seen.back().begin(), seen.back().end());
    }
    DeviceBuffer<uint8_t> presence{std::vector<uint8_t>(3 * vocab, 0)};
    for (const SamplingOptions& o : sets) {
      const Call c = run(*ctx, logits, int64_t(vocab), rows, tokens, &presence, 3, params_of(o), true);
      for (int r = 0; r < 3; ++r) {
        INFO("vocab " << vocab << " row " << r << " T " << o.temperature << " top_k " << o.top_k << " top_p " << o.top_p
                      << " min_p " << o.min_p << " penalty " << o.repetition_penalty);
        std::vector<float> cpu_logits(logits.begin() + long(r * vocab), logits.begin() + long((r + 1) * vocab));
        const auto cpu = Sampler(o, 0).candidates(cpu_logits.data(), int64_t(vocab), seen[size_t(r)]);
        std::set<int32_t> want, got;
        for (const auto& x : cpu) want.insert(x.first);
        for (size_t i = 0; i < vocab; ++i)
          if (c.kept[size_t(r) * vocab + i]) got.insert(int32_t(i));
        CHECK(got.count(c.results[size_t(r)].id) == 1);  // the draw is one of the kept tokens
        ++compared;
        if (got == want) continue;
        REQUIRE(cut_is_ambiguous(cpu_logits, o, cpu, 1e-6));
        ++excused;
      }
    }
  }
  INFO(excused << " of " << compared << " cases excused as within rounding of the cut");
  CHECK(excused * 20 <= compared);
}

// Tokens exactly at the top-k threshold: exactly k kept, the lowest ids among the tied ones.
TEST_CASE("cuda top-k keeps the lowest ids among tokens tied at the threshold", "[cuda][sampling]") {
  auto ctx = make_context();
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f, 2.0f, 2.0f, 0.0f};
  SamplingOptions o;
  o.temperature = 1.0f;
  o.top_k = 4;  // 3, 3, then two of the three 2s: ids 2 and 4
  const Call c = run(*ctx, logits, 7, {row_of(0, 0, 0)}, {}, nullptr, 0, params_of(o), true);
  CHECK(c.kept == std::vector<uint8_t>{0, 1, 1, 1, 1, 0, 0});
}

// Many rows with the same logits, each its own stream, give independent draws: their counts
// against the CPU's candidate probabilities (chi-square, expected < 5 merged). Both block sizes.
TEST_CASE("cuda draws follow the kept probabilities", "[cuda][sampling]") {
  auto ctx = make_context();
  auto rng = test_rng(303);
  struct Case {
    size_t vocab;
    SamplingOptions o;
    int rows, launches;
  };
  const Case cases[] = {{1000, filters(0.9f, 200, 0.9f, 0.0f, 1.0f, 11), 2048, 50},
                        {50257, filters(1.0f, 60, 0.95f, 0.01f, 1.0f, 12), 1024, 50}};
  for (const Case& cs : cases) {
    const auto one = random_logits(rng, cs.vocab, 2.0f, false);
    std::vector<float> logits;
    for (int r = 0; r < cs.rows; ++r) logits.insert(logits.end(), one.begin(), one.end());
    auto cpu_logits = one;
    const auto cpu = Sampler(cs.o, 0).candidates(cpu_logits.data(), int64_t(cs.vocab), {});
    std::map<int32_t, double> counts;
    DeviceBuffer<float> d_logits(logits);  // uploaded once; each launch draws the next number
    DeviceBuffer<cuda::SampleResult> d_out{std::vector<cuda::SampleResult>(size_t(cs.rows))};
    for (int l = 0; l < cs.launches; ++l) {
      std::vector<cuda::SampleRow> rows;
      for (int r = 0; r < cs.rows; ++r) rows.push_back(row_of(-1, 0, 0, uint64_t(r), uint64_t(l)));
      DeviceBuffer<cuda::SampleRow> d_rows(rows);
      cuda::sample_rows(*ctx, d_logits.get(), int64_t(cs.vocab), cs.rows, int64_t(cs.vocab), d_rows.get(), nullptr,
                        nullptr, 0, params_of(cs.o), d_out.get());
      for (const auto& res : d_out.download()) ++counts[res.id];
    }
    const ChiSquare chi = chi_square(counts, cpu, double(cs.rows) * cs.launches);
    const double chi2 = chi.statistic;
    const int bins = chi.bins;
    INFO("vocab " << cs.vocab << ": chi2 " << chi2 << " over " << bins << " bins, bound " << chi2_bound(bins - 1));
    CHECK(counts.empty());  // nothing outside the kept set
    REQUIRE(bins >= 2);
    CHECK(chi2 < chi2_bound(bins - 1));
  }
}

TEST_CASE("cuda sampling is reproducible: same seed, stream and draw, same id", "[cuda][sampling]") {
  auto ctx = make_context();
  auto rng = test_rng(304);
  const size_t vocab = 50257;
  std::vector<float> logits;
  std::vector<cuda::SampleRow> rows;
  for (int r = 0; r < 64; ++r) {
    const auto row = random_logits(rng, vocab, 1.0f, false);
    logits.insert(logits.end(), row.begin(), row.end());
    rows.push_back(row_of(-1, 0, 0, uint64_t(r % 8), uint64_t(r)));
  }
  SamplingOptions o = filters(1.5f, 0, 0.98f, 0.0f, 1.0f, 777);
  const Call a = run(*ctx, logits, int64_t(vocab), rows, {}, nullptr, 0, params_of(o), false);
  const Call b = run(*ctx, logits, int64_t(vocab), rows, {}, nullptr, 0, params_of(o), false);
  o.seed = 778;
  const Call other = run(*ctx, logits, int64_t(vocab), rows, {}, nullptr, 0, params_of(o), false);
  int same_as_other = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    CHECK(a.results[r].id == b.results[r].id);
    same_as_other += a.results[r].id == other.results[r].id;
  }
  CHECK(same_as_other < 32);  // flat rows: another seed changes most draws
}

// The presence rows: a restart clears the slot, a continuation adds to it, other slots are
// untouched, and rows not wanted still record. Logits are built so the greedy pick tells whether
// token 5 (the favourite, 10 -> 5 under penalty 2) is present: then token 6 (9) wins.
TEST_CASE("cuda repetition penalty follows each slot's fed tokens across calls", "[cuda][sampling]") {
  auto ctx = make_context();
  const int64_t vocab = 16;
  std::vector<float> row(size_t(vocab), 0.0f);
  row[5] = 10.0f;
  row[6] = 9.0f;
  SamplingOptions o;
  o.repetition_penalty = 2.0f;
  DeviceBuffer<uint8_t> presence{std::vector<uint8_t>(size_t(2 * vocab), 0)};
  auto pick = [&](cuda::SampleRow r, const std::vector<int32_t>& tokens) {
    return run(*ctx, row, vocab, {r}, tokens, &presence, 2, params_of(o), false).results[0].id;
  };
  cuda::SampleRow start = row_of(0, 0, 2);
  cuda::SampleRow more = start;
  more.restart = 0;
  CHECK(pick(start, {1, 2}) == 5);  // slot 0 saw 1, 2
  CHECK(pick(more, {5}) == 6);      // ... and now 5
  CHECK(pick(more, {3}) == 6);      // 5 is still remembered
  cuda::SampleRow other = row_of(1, 0, 1);
  CHECK(pick(other, {4}) == 5);     // slot 1 is separate
  CHECK(pick(start, {7, 8}) == 5);  // a restart forgets 5
  cuda::SampleRow silent = more;
  silent.wanted = 0;
  const Call c = run(*ctx, row, vocab, {silent}, {5}, &presence, 2, params_of(o), false);
  CHECK(c.results[0].id == -1);
  CHECK(pick(more, {9}) == 6);  // the unwanted row still recorded 5
}

// Tolerance: the device sums fixed-point weights with 2^-59 resolution (vocab 16) to 2^-47
// (vocab 50257) per token and float exp errors of a few ulps: ~1e-6 relative on the sum, so
// 1e-5 absolute on log p covers it with margin.
TEST_CASE("cuda logprobs match log_softmax_at", "[cuda][sampling]") {
  auto ctx = make_context();
  auto rng = test_rng(305);
  for (size_t vocab : kVocabs) {
    std::vector<float> logits;
    std::vector<cuda::SampleRow> rows;
    for (int r = 0; r < 4; ++r) {
      const auto row = random_logits(rng, vocab, 3.0f, false);
      logits.insert(logits.end(), row.begin(), row.end());
      rows.push_back(row_of(-1, 0, 0, uint64_t(r)));
    }
    for (const SamplingOptions& o : {SamplingOptions{}, filters(1.0f, 0, 0.9f, 0.0f, 1.0f, 3)}) {
      const Call c = run(*ctx, logits, int64_t(vocab), rows, {}, nullptr, 0, params_of(o, true), false);
      for (size_t r = 0; r < rows.size(); ++r) {
        const float want = log_softmax_at(logits.data() + r * vocab, int64_t(vocab), c.results[r].id);
        INFO("vocab " << vocab << " row " << r << " id " << c.results[r].id);
        CHECK(std::fabs(c.results[r].logprob - want) <= 1e-5f);
      }
    }
  }
}

TEST_CASE("sampling_philox draws exactly cuRAND's Philox4_32_10 stream", "[cuda][sampling][philox]") {
  auto ctx = make_context();
  for (const auto& [seed, stream, draw] : {std::tuple<uint64_t, uint64_t, uint64_t>{0, 0, 0},
                                           {42, 3, 17},
                                           {0xdeadbeefcafef00dull, 0x123456789ull, 0xabcdef01234ull}}) {
    DeviceBuffer<uint32_t> words{std::vector<uint32_t>(8, 0)};
    cuda::curand_philox_words(*ctx, seed, stream, 4 * draw, 8, words.get());
    cuda::synchronize(*ctx);
    const auto got = words.download();
    const auto b0 = sampling::philox_stream_block(seed, stream, draw);
    const auto b1 = sampling::philox_stream_block(seed, stream, draw + 1);
    const std::vector<uint32_t> want = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
    CHECK(got == want);
  }
}

TEST_CASE("cuda sample_rows rejects bad options", "[cuda][sampling][errors]") {
  auto ctx = make_context();
  const std::vector<float> logits(8, 0.0f);
  SamplingOptions o;
  o.top_p = 0.0f;
  CHECK_THROWS_AS(run(*ctx, logits, 8, {row_of(-1, 0, 0)}, {}, nullptr, 0, params_of(o), false), KernelError);
  o = {};
  o.repetition_penalty = -1.0f;
  CHECK_THROWS_AS(run(*ctx, logits, 8, {row_of(-1, 0, 0)}, {}, nullptr, 0, params_of(o), false), KernelError);
}
