// Scoring and perplexity over a scripted StepModel whose log p(target | history) is a known
// function of the slot's history: every sequence's tokens reach the right slot in order across
// chunks and groups, each row's target is the next token (across chunk boundaries), context-only
// rows are not scored, and the perplexity windows are the Hugging Face guide's.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <stdexcept>

#include "engine/core/error.h"
#include "engine/generation/perplexity.h"
#include "engine/generation/scoring.h"

using namespace eagerlm;

namespace {

constexpr int64_t kVocab = 1000;

// The scripted log-probability of `target` after `history`: a hash, in [-10, 0).
float scripted_logprob(const std::vector<int32_t>& history, int32_t target) {
  uint64_t x = history.size() * 31 + uint64_t(target);
  for (int32_t t : history) x = x * 1000003u + uint64_t(t);
  return -float(1 + x % 1000) / 100.0f;
}

class ScriptedScorer : public StepModel {
 public:
  ScriptedScorer(int64_t slots, int64_t max_len, int64_t rows) : slots_(slots), len_(max_len), rows_(rows) {}
  int64_t vocab_size() const override { return kVocab; }
  int64_t max_slots() const override { return slots_; }
  int64_t max_len() const override { return len_; }
  int64_t max_step_rows() const override { return rows_; }
  const float* step(const std::vector<SequenceStep>&) override { throw std::logic_error("not a generation model"); }
  void copy_prefix(int32_t, int32_t, int32_t) override { throw std::logic_error("not used"); }
  bool scores_targets() const override { return true; }
  const float* step_logprobs(const std::vector<SequenceStep>& seqs, const std::vector<int32_t>& targets) override {
    out_.clear();
    size_t row = 0;
    std::map<int32_t, bool> seen;
    for (const SequenceStep& s : seqs) {
      if (s.slot < 0 || s.slot >= slots_ || seen[s.slot]) throw std::logic_error("bad or repeated slot");
      seen[s.slot] = true;
      auto& h = history_[s.slot];
      if (size_t(s.past_len) > h.size()) throw std::logic_error("past_len is past what the cache holds");
      if (s.past_len + s.n_tokens > len_) throw std::logic_error("past max_len");
      h.resize(size_t(s.past_len));
      for (int32_t j = 0; j < s.n_tokens; ++j, ++row) {
        h.push_back(s.tokens[j]);
        if (targets.at(row) != -1) out_.push_back(scripted_logprob(h, targets[row]));
      }
    }
    if (int64_t(row) > rows_ || row != targets.size()) throw std::logic_error("rows and targets disagree");
    ++steps;
    return out_.data();
  }
  int steps = 0;

 private:
  int64_t slots_, len_, rows_;
  std::map<int32_t, std::vector<int32_t>> history_;
  std::vector<float> out_;
};

std::vector<int32_t> tokens(size_t n, uint32_t seed) {
  std::vector<int32_t> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = int32_t((i * 7919 + seed * 104729) % kVocab);
  return t;
}

// What scoring must return: log p(ids[k] | ids[<k]) for k from first on.
std::vector<float> expected_scores(const ScoreRequest& r) {
  std::vector<float> out;
  for (int32_t k = r.first; k < r.count; ++k) out.push_back(scripted_logprob({r.ids, r.ids + k}, r.ids[k]));
  return out;
}

}  // namespace

TEST_CASE("score_sequences feeds each sequence in order and scores each token against the next",
          "[generation][scoring]") {
  const auto a = tokens(40, 1), b = tokens(1, 2), c = tokens(7, 3), d = tokens(25, 4), e = tokens(2, 5);
  const std::vector<ScoreRequest> requests = {
      {a.data(), 40, 1}, {b.data(), 1, 1}, {c.data(), 7, 3}, {d.data(), 25, 25}, {e.data(), 2, 1}};
  // Two slots (three groups), steps of 9 rows: chunks end inside sequences.
  ScriptedScorer model(2, 39, 9);
  int64_t last_fed = 0, total = 0;
  const auto got = score_sequences(model, requests, [&](int64_t fed, int64_t all) {
    CHECK(fed > last_fed);
    last_fed = fed, total = all;
  });
  REQUIRE(got.size() == requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    INFO("sequence " << i);
    CHECK(got[i] == expected_scores(requests[i]));
  }
  CHECK(total == 39 + 6 + 1);  // the one-token sequence and the one scoring nothing are not fed
  CHECK(last_fed == total);
}

TEST_CASE("score requests are checked before anything runs", "[generation][scoring][errors]") {
  ScriptedScorer model(1, 8, 8);
  const auto ok = tokens(5, 1);
  const std::vector<int32_t> bad = {1, 2, int32_t(kVocab)}, neg = {-1, 2};
  auto message = [&](std::vector<ScoreRequest> r) -> std::string {
    try {
      score_sequences(model, r);
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kInvalidArgument);
      return e.what();
    }
    return "";
  };
  CHECK_THAT(message({{ok.data(), 5, 1}, {ok.data(), 0, 1}}), Catch::Contains("sequence 1 is empty"));
  CHECK_THAT(message({{bad.data(), 3, 1}}), Catch::Contains("token id 1000 at index 2"));
  CHECK_THAT(message({{neg.data(), 2, 1}}), Catch::Contains("token id -1 at index 0"));
  CHECK_THAT(message({{ok.data(), 5, 0}}), Catch::Contains("sequence 0 scores from token 0"));
  const auto long_one = tokens(10, 2);
  CHECK_THAT(message({{long_one.data(), 10, 1}}), Catch::Contains("at most 9"));
  CHECK(model.steps == 0);
}

namespace {

// The windows of the Hugging Face guide's loop, transcribed: (begin, end, trg_len) each.
struct GuideWindow {
  int64_t begin, end, trg_len;
};
std::vector<GuideWindow> guide_windows(int64_t seq_len, int64_t max_length, int64_t stride) {
  std::vector<GuideWindow> out;
  int64_t prev_end_loc = 0;
  for (int64_t begin_loc = 0; begin_loc < seq_len; begin_loc += stride) {
    const int64_t end_loc = std::min(begin_loc + max_length, seq_len);
    out.push_back({begin_loc, end_loc, end_loc - prev_end_loc});
    prev_end_loc = end_loc;
    if (end_loc == seq_len) break;
  }
  return out;
}

}  // namespace

TEST_CASE("perplexity windows are the guide's, each token scored at most once", "[generation][perplexity]") {
  for (const int64_t n : {2, 3, 10, 64, 65, 200}) {
    for (const int64_t window : {2, 5, 16, 64}) {
      for (const int64_t stride :
           {int64_t(1), window / 2 > 0 ? window / 2 : 1, window - 1 > 0 ? window - 1 : 1, window}) {
        INFO("n=" << n << " window=" << window << " stride=" << stride);
        const auto ids = tokens(size_t(n), 7);
        const auto windows = perplexity_windows(ids, window, stride);
        const auto guide = guide_windows(n, window, stride);
        REQUIRE(windows.size() == guide.size());
        std::vector<int> scored(size_t(n), 0);
        for (size_t w = 0; w < windows.size(); ++w) {
          CHECK(windows[w].ids == ids.data() + guide[w].begin);
          CHECK(windows[w].count == guide[w].end - guide[w].begin);
          // The guide's labels keep the last trg_len tokens of the window; the shift drops the
          // window's first token, which only the first window's labels include.
          CHECK(windows[w].first == std::max<int64_t>(1, windows[w].count - guide[w].trg_len));
          for (int32_t k = windows[w].first; k < windows[w].count; ++k) ++scored[size_t(guide[w].begin + k)];
        }
        // No token twice. With overlapping windows every token but the first is scored; without
        // (stride = window) a window's first token has no context in it and is not.
        CHECK(scored[0] == 0);
        CHECK(std::count(scored.begin(), scored.end(), 2) == 0);
        for (int64_t i = 1; i < n; ++i) CHECK(scored[size_t(i)] == (stride == window && i % window == 0 ? 0 : 1));
      }
    }
  }
}

TEST_CASE("perplexity sums each token's log-probability from its window", "[generation][perplexity]") {
  const auto ids = tokens(50, 9);
  const int64_t window = 16, stride = 6;
  ScriptedScorer model(3, window - 1, 20);
  const PerplexityResult r = perplexity(model, ids, window, stride);
  const auto windows = perplexity_windows(ids, window, stride);
  std::vector<float> want;
  for (const auto& w : windows)
    for (float lp : expected_scores(w)) want.push_back(lp);
  CHECK(r.logprobs == want);
  CHECK(r.tokens == 49);
  std::vector<int64_t> all(49);
  for (int64_t i = 0; i < 49; ++i) all[size_t(i)] = i + 1;
  CHECK(r.positions == all);
  CHECK(r.windows == int64_t(windows.size()));
  double nll = 0;
  for (float lp : want) nll -= double(lp);
  CHECK(r.nll == Approx(nll).epsilon(1e-12));
  CHECK(r.perplexity() == Approx(std::exp(nll / 49)).epsilon(1e-12));
}

TEST_CASE("perplexity without overlap leaves each later window's first token unscored", "[generation][perplexity]") {
  const auto ids = tokens(20, 3);
  ScriptedScorer model(4, 7, 30);
  const PerplexityResult r = perplexity(model, ids, 8, 8);  // windows [0, 8), [8, 16), [16, 20)
  const std::vector<int64_t> positions = {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 17, 18, 19};
  CHECK(r.positions == positions);
  CHECK(r.tokens == 17);
  CHECK(r.windows == 3);
  CHECK(r.fed == 7 + 7 + 3);
}

TEST_CASE("perplexity options are checked", "[generation][perplexity][errors]") {
  const auto ids = tokens(10, 1);
  auto option_of = [&](int64_t window, int64_t stride) -> std::string {
    try {
      perplexity_windows(ids, window, stride);
    } catch (const OptionError& e) {
      return e.option();
    }
    return "";
  };
  CHECK(option_of(1, 1) == "window");
  CHECK(option_of(4, 0) == "stride");
  CHECK(option_of(4, 5) == "stride");
  CHECK(option_of(4, 4).empty());
  CHECK_THROWS_AS(perplexity_windows(tokens(1, 1), 4, 4), Error);
}
