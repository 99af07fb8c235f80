// Beam search (Hugging Face Flax's rules) over scripted logits:
// * against exhaustive search: with num_beams large enough that no live hypothesis is ever
//   dropped, the finished hypotheses Flax returns are every sequence ending in end-of-text,
//   ranked by sum(logprobs) / generated_length^length_penalty, and, where none can finish,
//   the full-length sequences ranked by their raw sums;
// * hand-worked small searches for early_stopping, the end-of-search rule, length_penalty,
//   and the placeholders Flax returns where fewer hypotheses finished than were asked for;
// * end to end through GenerationLoop, over a model whose logits hash the whole history its
//   cache slot was fed, so that a beam continuing from the wrong cache gets wrong ids.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>

#include "engine/core/error.h"
#include "engine/generation/beam_search.h"
#include "engine/generation/generator.h"

using namespace eagerlm;

namespace {

using Ids = std::vector<int32_t>;
using LogitsFn = std::function<std::vector<float>(const Ids& history)>;

// Logits that are a fixed pseudo-random function of the whole history (prompt included).
LogitsFn hashed_logits(int64_t vocab, uint64_t salt, float scale = 3.0f) {
  return [=](const Ids& h) {
    uint64_t x = salt ^ (h.size() * 0x9e3779b97f4a7c15ull);
    for (int32_t t : h) x = (x ^ uint64_t(t + 1)) * 0x100000001b3ull;
    std::mt19937_64 rng(x);
    std::vector<float> out(static_cast<size_t>(vocab));
    for (float& v : out) v = scale * float(double(rng() >> 11) * 0x1.0p-53 * 2.0 - 1.0);
    return out;
  };
}

struct Run {
  std::vector<GenerationResult> results;
  int steps = 0;
};

// Drives BeamSearch as the scheduler does: one row on the first step, then one per running
// beam, each beam's history being its parent's plus its token.
Run drive(const GenerationOptions& o, const Ids& prompt, int64_t vocab, const LogitsFn& logits_of) {
  BeamSearch search(o, int64_t(prompt.size()), o.max_new_tokens, vocab);
  std::vector<Ids> histories = {prompt};
  Run run;
  while (!search.done()) {
    std::vector<float> rows;
    std::vector<const Ids*> views;
    for (const Ids& h : histories) {
      const std::vector<float> l = logits_of(h);
      rows.insert(rows.end(), l.begin(), l.end());
      views.push_back(&h);
    }
    const std::vector<BeamChoice> choices = search.step(rows.data(), int64_t(histories.size()), vocab, views);
    ++run.steps;
    REQUIRE(int32_t(choices.size()) == o.beams.num_beams);
    std::vector<Ids> next;
    for (const BeamChoice& c : choices) {
      REQUIRE(c.parent >= 0);
      REQUIRE(size_t(c.parent) < histories.size());
      next.push_back(histories[size_t(c.parent)]);
      next.back().push_back(c.token);
    }
    histories = std::move(next);
    REQUIRE(run.steps <= o.max_new_tokens);
  }
  run.results = search.results();
  return run;
}

// ---- The exhaustive reference.

struct Hypothesis {
  Ids ids;
  float score;
};

// log-softmax in double, rounded once: the search's float32 one differs by an ulp at most.
std::vector<float> reference_log_probs(const std::vector<float>& logits) {
  double mx = -std::numeric_limits<double>::infinity();
  for (float v : logits) mx = std::max(mx, double(v));
  double sum = 0;
  for (float v : logits) sum += std::exp(double(v) - mx);
  std::vector<float> out;
  for (float v : logits) out.push_back(float(double(v) - mx - std::log(sum)));
  return out;
}

struct Exhaustive {
  std::vector<Hypothesis> finished;    // every sequence ending in end-of-text, best first
  std::vector<Hypothesis> unfinished;  // every full-length sequence without it, best first
};

// Every continuation of up to max_new_tokens tokens, with the processors written out plainly:
// end-of-text banned while fewer than min_new_tokens were generated, logit_bias added, the
// repetition penalty multiplying the (negative) log-probabilities of tokens seen before, an
// n-gram ban. Scores add up in float32 as the search's do.
Exhaustive exhaustive(const GenerationOptions& o, const Ids& prompt, int64_t vocab, const LogitsFn& logits_of) {
  Exhaustive out;
  const float inf = std::numeric_limits<float>::infinity();
  std::function<void(Ids&, float)> extend = [&](Ids& generated, float sum) {
    if (int32_t(generated.size()) == o.max_new_tokens) {
      out.unfinished.push_back({generated, sum});
      return;
    }
    Ids history = prompt;
    history.insert(history.end(), generated.begin(), generated.end());
    std::vector<float> lp = reference_log_probs(logits_of(history));
    for (const auto& [id, bias] : o.sampling.logit_bias) lp[size_t(id)] += bias;
    for (int32_t t = 0; t < vocab; ++t) {
      const bool seen = std::find(history.begin(), history.end(), t) != history.end();
      if (seen && o.sampling.repetition_penalty != 1.0f) {
        float& l = lp[size_t(t)];
        l = l > 0 ? l / o.sampling.repetition_penalty : l * o.sampling.repetition_penalty;
      }
    }
    if (int32_t(generated.size()) < o.min_new_tokens && o.eos_id < vocab) lp[size_t(o.eos_id)] = -inf;
    const size_t n = size_t(o.sampling.no_repeat_ngram_size);
    for (int32_t t = 0; t < vocab && n > 0; ++t) {
      Ids with = history;
      with.push_back(t);
      if (with.size() < n) continue;
      const Ids last(with.end() - long(n), with.end());
      for (size_t s = 0; s + n < with.size(); ++s)
        if (Ids(with.begin() + long(s), with.begin() + long(s + n)) == last) lp[size_t(t)] = -inf;
    }
    for (int32_t t = 0; t < vocab; ++t) {
      if (lp[size_t(t)] == -inf) continue;
      const float s = sum + lp[size_t(t)];
      generated.push_back(t);
      if (t == o.eos_id) {
        const float length = float(generated.size());
        out.finished.push_back({generated, s / std::pow(length, o.beams.length_penalty)});
      } else {
        extend(generated, s);
      }
      generated.pop_back();
    }
  };
  Ids generated;
  extend(generated, 0.0f);
  const auto by_score = [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; };
  std::stable_sort(out.finished.begin(), out.finished.end(), by_score);
  std::stable_sort(out.unfinished.begin(), out.unfinished.end(), by_score);
  return out;
}

// Scores of Flax's placeholders and of hypotheses descended from its -1e7 starting beams
// (tiny vocabularies have more beams than live hypotheses): far below any real one.
constexpr double kJunk = -1.0e5;

void check_against_exhaustive(const GenerationOptions& o, const Ids& prompt, int64_t vocab, const LogitsFn& fn) {
  const Exhaustive ref = exhaustive(o, prompt, vocab, fn);
  const Run run = drive(o, prompt, vocab, fn);
  REQUIRE(int32_t(run.results.size()) == o.beams.num_return_sequences);
  CHECK(run.steps == o.max_new_tokens);  // a slot is always open, so the search runs to the end
  const bool finished = !ref.finished.empty();
  const std::vector<Hypothesis>& expected = finished ? ref.finished : ref.unfinished;
  const size_t real = std::min(expected.size(), run.results.size());
  for (size_t i = 0; i < run.results.size(); ++i) {
    INFO("result " << i);
    const GenerationResult& g = run.results[i];
    if (i >= real) {
      CHECK(g.score < kJunk);
      continue;
    }
    CHECK(g.ids == expected[i].ids);
    CHECK(g.score == Approx(expected[i].score).epsilon(1e-5));
    CHECK(g.finish_reason == (finished ? FinishReason::kEos : FinishReason::kLength));
  }
}

GenerationOptions beam_options(int32_t beams, int32_t max_new, int32_t eos) {
  GenerationOptions o;
  o.beams.num_beams = beams;
  o.beams.num_return_sequences = beams;
  o.max_new_tokens = max_new;
  o.eos_id = eos;
  return o;
}

}  // namespace

TEST_CASE("beam search with enough beams is exhaustive search", "[beam]") {
  // 3 ids (2 is end-of-text), 3 steps: at most 4 live hypotheses and 7 finished ones, so 8
  // beams keep every one of them.
  const Ids prompt = {0, 1, 1, 0};
  for (uint64_t salt : {1u, 2u, 3u, 4u}) {
    const LogitsFn fn = hashed_logits(3, salt);
    for (float lp : {1.0f, 0.0f, 2.0f, -1.0f, 0.5f}) {
      GenerationOptions o = beam_options(8, 3, 2);
      o.beams.length_penalty = lp;
      INFO("salt " << salt << " length_penalty " << lp);
      check_against_exhaustive(o, prompt, 3, fn);
      o.beams.num_return_sequences = 3;  // the best three of the same search
      check_against_exhaustive(o, prompt, 3, fn);
    }
  }
  // 4 ids, 2 steps: 3 live hypotheses after the first, 4 finished at most.
  for (uint64_t salt : {5u, 6u}) {
    GenerationOptions o = beam_options(6, 2, 3);
    o.beams.length_penalty = 1.5f;
    check_against_exhaustive(o, {2}, 4, hashed_logits(4, salt, 4.0f));
  }
}

TEST_CASE("the length penalty decides between short and long finished hypotheses", "[beam]") {
  // Over the same logits, length_penalty 0 ranks by raw sums (shorter ones win), 2 divides by
  // length squared (longer ones win): the best hypothesis must differ, and each must be the
  // exhaustive search's best under its own rule.
  const LogitsFn fn = hashed_logits(3, 11, 1.0f);  // flat-ish: end-of-text is often likely
  GenerationOptions o = beam_options(8, 3, 2);
  o.beams.length_penalty = 0.0f;
  const Run raw = drive(o, {1}, 3, fn);
  check_against_exhaustive(o, {1}, 3, fn);
  o.beams.length_penalty = 2.0f;
  const Run squared = drive(o, {1}, 3, fn);
  check_against_exhaustive(o, {1}, 3, fn);
  CHECK(raw.results[0].ids.size() < squared.results[0].ids.size());
}

TEST_CASE("min_new_tokens holds end-of-text back; with none possible the running beams come back", "[beam]") {
  const Ids prompt = {1, 0};
  for (uint64_t salt : {21u, 22u}) {
    const LogitsFn fn = hashed_logits(3, salt);
    GenerationOptions o = beam_options(8, 3, 2);
    for (int32_t min_new : {1, 2}) {
      o.min_new_tokens = min_new;
      INFO("min_new_tokens " << min_new);
      check_against_exhaustive(o, prompt, 3, fn);
      const Run run = drive(o, prompt, 3, fn);
      for (const GenerationResult& g : run.results)
        if (g.score > kJunk) CHECK(int32_t(g.ids.size()) > min_new);
    }
    // End-of-text never allowed: the full-length running beams, by raw sums.
    o.min_new_tokens = 3;
    check_against_exhaustive(o, prompt, 3, fn);
    const Run run = drive(o, prompt, 3, fn);
    for (const GenerationResult& g : run.results) {
      CHECK(g.finish_reason == FinishReason::kLength);
      CHECK(g.ids.size() == 3);
    }
  }
  // An end-of-text id outside the vocabulary: nothing finishes either. 2 ids, 3 steps: 8
  // sequences, all among the 2·4 candidates of the last step.
  GenerationOptions o = beam_options(4, 3, 7);
  check_against_exhaustive(o, {0}, 2, hashed_logits(2, 31));
}

TEST_CASE("the processors act on log-probabilities in the search", "[beam]") {
  const Ids prompt = {0, 1};
  const LogitsFn fn = hashed_logits(3, 41);
  GenerationOptions o = beam_options(8, 3, 2);
  o.sampling.no_repeat_ngram_size = 2;
  check_against_exhaustive(o, prompt, 3, fn);
  o.sampling.no_repeat_ngram_size = 0;
  o.sampling.repetition_penalty = 1.7f;
  check_against_exhaustive(o, prompt, 3, fn);
  o.sampling.repetition_penalty = 1.0f;
  o.sampling.logit_bias = {{0, -0.8f}, {2, 1.5f}};
  check_against_exhaustive(o, prompt, 3, fn);
}

namespace {

// Logits as log-probabilities, by generated history (uniform where the table has none).
LogitsFn table(const std::map<Ids, std::vector<double>>& probs, size_t prompt_len, size_t vocab = 4) {
  return [=](const Ids& h) {
    const Ids generated(h.begin() + long(prompt_len), h.end());
    const auto it = probs.find(generated);
    const std::vector<double> p = it != probs.end() ? it->second : std::vector<double>(vocab, 1.0 / double(vocab));
    std::vector<float> out;
    for (double v : p) out.push_back(float(std::log(v)));
    return out;
  };
}

float lg(double p) { return float(std::log(p)); }

}  // namespace

TEST_CASE("early_stopping ends the search once num_beams hypotheses finished", "[beam]") {
  // Step 1: [3] finishes (log .4); running [0], [1].
  // Step 2: candidates [0 0] (log .3 + log .6), [1 3] (log .2 + log .7), [0 3], [0 1]: [1 3]
  //   finishes at (log .2 + log .7) / 2 = -0.983, so both finished slots are full.
  // early_stopping: done after 2 steps. Without it the best running beam [0 0] can still
  //   win ((log .3 + log .6) / 2 = -0.857 > -0.983): step 3 keeps [0 0 0]; step 4 finishes
  //   [0 0 0 3] at -0.628; step 5 (the last) finds nothing better.
  const std::map<Ids, std::vector<double>> probs = {
      {{}, {0.3, 0.2, 0.1, 0.4}},        {{0}, {0.6, 0.1, 0.1, 0.2}},       {{1}, {0.1, 0.1, 0.1, 0.7}},
      {{0, 0}, {0.9, 0.04, 0.03, 0.03}}, {{0, 0, 0}, {0.2, 0.2, 0.1, 0.5}},
  };
  const LogitsFn fn = table(probs, 1);
  GenerationOptions o = beam_options(2, 5, 3);
  o.beams.early_stopping = true;
  const Run early = drive(o, {9}, 4, fn);
  CHECK(early.steps == 2);
  REQUIRE(early.results.size() == 2);
  CHECK(early.results[0].ids == Ids{3});
  CHECK(early.results[0].score == Approx(lg(0.4)));
  CHECK(early.results[0].finish_reason == FinishReason::kEos);
  CHECK(early.results[1].ids == Ids{1, 3});
  CHECK(early.results[1].score == Approx((lg(0.2) + lg(0.7)) / 2));

  o.beams.early_stopping = false;
  const Run full = drive(o, {9}, 4, fn);
  CHECK(full.steps == 5);
  CHECK(full.results[0].ids == Ids{0, 0, 0, 3});
  CHECK(full.results[0].score == Approx((lg(0.3) + lg(0.6) + lg(0.9) + lg(0.5)) / 4));
  CHECK(full.results[1].ids == Ids{3});
  o.beams.num_return_sequences = 1;
  const Run one = drive(o, {9}, 4, fn);
  REQUIRE(one.results.size() == 1);
  CHECK(one.results[0].ids == Ids{0, 0, 0, 3});
}

TEST_CASE("the search ends when the best running beam can no longer beat the worst finished", "[beam]") {
  // Step 1: [3] finishes (log .4 = -0.916); running [0] (log .3), [1] (log .2).
  // Step 2: [0 3] = log .3 + log .5, [1 3] = log .2 + log .7, running best [0 0] = 2 log .3.
  //   length_penalty 1: finished [3] -0.916, [0 3] -0.949; 2 log .3 / 2 = -1.204 < -0.949.
  //   length_penalty 0: finished [3], [0 3] -1.897; 2 log .3 = -2.408 < -1.897.
  //   length_penalty 2: finished [0 3] -0.474, [1 3] -0.491; 2 log .3 / 4 = -0.602 < -0.491.
  // Each stops after 2 of its 6 steps, without early_stopping.
  const std::map<Ids, std::vector<double>> probs = {
      {{}, {0.3, 0.2, 0.1, 0.4}}, {{0}, {0.3, 0.1, 0.1, 0.5}}, {{1}, {0.1, 0.1, 0.1, 0.7}}};
  const LogitsFn fn = table(probs, 1);
  GenerationOptions o = beam_options(2, 6, 3);
  const struct {
    float length_penalty;
    Ids first, second;
    float first_score, second_score;
  } cases[] = {
      {1.0f, {3}, {0, 3}, lg(0.4), (lg(0.3) + lg(0.5)) / 2},
      {0.0f, {3}, {0, 3}, lg(0.4), lg(0.3) + lg(0.5)},
      {2.0f, {0, 3}, {1, 3}, (lg(0.3) + lg(0.5)) / 4, (lg(0.2) + lg(0.7)) / 4},
  };
  for (const auto& c : cases) {
    INFO("length_penalty " << c.length_penalty);
    o.beams.length_penalty = c.length_penalty;
    const Run run = drive(o, {5}, 4, fn);
    CHECK(run.steps == 2);
    REQUIRE(run.results.size() == 2);
    CHECK(run.results[0].ids == c.first);
    CHECK(run.results[0].score == Approx(c.first_score));
    CHECK(run.results[1].ids == c.second);
    CHECK(run.results[1].score == Approx(c.second_score));
  }
}

TEST_CASE("finished slots no hypothesis filled come back as Flax's placeholders", "[beam]") {
  // [3] finishes at step 1; afterwards end-of-text is never among the 4 best candidates, so
  // at the end the second finished slot still holds Flax's initial placeholder (all padding,
  // score -1e7), which Flax returns as the second sequence: here no ids.
  const std::map<Ids, std::vector<double>> probs = {
      {{}, {0.3, 0.2, 0.1, 0.4}}, {{0}, {0.4, 0.3, 0.29, 0.01}}, {{1}, {0.4, 0.3, 0.29, 0.01}}};
  GenerationOptions o = beam_options(2, 2, 3);
  const Run run = drive(o, {5}, 4, table(probs, 1));
  REQUIRE(run.results.size() == 2);
  CHECK(run.results[0].ids == Ids{3});
  CHECK(run.results[0].finish_reason == FinishReason::kEos);
  CHECK(run.results[1].ids.empty());
  CHECK(run.results[1].score == -1.0e7);
  CHECK(run.results[1].finish_reason == FinishReason::kLength);
}

TEST_CASE("running beams come back, best first, with raw scores where none finished", "[beam]") {
  // 6 ids, end-of-text 5 never among the 4 best candidates. Step 1: running [0] (log .4),
  // [1] (log .3). Step 2: [0 1] = log .4 + log .7 = -1.273, [1 0] = log .3 + log .9 = -1.309,
  // then [0 0], [0 2]: the running beams are [0 1], [1 0], scored by their sums (no division).
  const std::map<Ids, std::vector<double>> probs = {{{}, {0.4, 0.3, 0.1, 0.1, 0.09, 0.01}},
                                                    {{0}, {0.2, 0.7, 0.05, 0.03, 0.01, 0.01}},
                                                    {{1}, {0.9, 0.04, 0.03, 0.01, 0.01, 0.01}}};
  GenerationOptions o = beam_options(2, 2, 5);
  const Run run = drive(o, {5}, 6, table(probs, 1, 6));
  REQUIRE(run.results.size() == 2);
  CHECK(run.results[0].ids == Ids{0, 1});
  CHECK(run.results[0].score == Approx(lg(0.4) + lg(0.7)));
  CHECK(run.results[0].finish_reason == FinishReason::kLength);
  CHECK(run.results[1].ids == Ids{1, 0});
  CHECK(run.results[1].score == Approx(lg(0.3) + lg(0.9)));
}

TEST_CASE("ties go to the lower beam and the lower id, as jax.lax.top_k orders them", "[beam]") {
  // Every id equally likely: the running beams are the lowest ids of the first beam.
  GenerationOptions o = beam_options(3, 2, 3);
  const Run run = drive(o, {5}, 4, [](const Ids&) { return std::vector<float>(4, 0.0f); });
  REQUIRE(run.results.size() == 3);
  // Step 1: [3] finishes (score log .25); running [0], [1], [2]. Step 2: candidates of equal
  // score 2 log .25; the first 6 are beam [0]'s four and beam [1]'s 0 and 1: [0 3] finishes.
  CHECK(run.results[0].ids == Ids{3});
  CHECK(run.results[1].ids == Ids{0, 3});
  CHECK(run.results[2].ids.empty());  // a placeholder
}

TEST_CASE("the first step's one row equals num_beams identical rows", "[beam]") {
  const LogitsFn fn = hashed_logits(20, 51);
  GenerationOptions o = beam_options(4, 6, 19);
  const Ids prompt = {3, 4};
  const Run once = drive(o, prompt, 20, fn);
  BeamSearch search(o, 2, 6, 20);
  std::vector<float> rows;
  for (int i = 0; i < 4; ++i) {
    const auto l = fn(prompt);
    rows.insert(rows.end(), l.begin(), l.end());
  }
  const std::vector<const Ids*> views(4, &prompt);
  const auto choices = search.step(rows.data(), 4, 20, views);
  std::vector<Ids> histories;
  for (const BeamChoice& c : choices) {
    histories.push_back(prompt);
    histories.back().push_back(c.token);
  }
  while (!search.done()) {
    rows.clear();
    std::vector<const Ids*> v;
    for (const Ids& h : histories) {
      const auto l = fn(h);
      rows.insert(rows.end(), l.begin(), l.end());
      v.push_back(&h);
    }
    const auto next = search.step(rows.data(), 4, 20, v);
    std::vector<Ids> n;
    for (const BeamChoice& c : next) {
      n.push_back(histories[size_t(c.parent)]);
      n.back().push_back(c.token);
    }
    histories = n;
  }
  const auto results = search.results();
  REQUIRE(results.size() == once.results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    CHECK(results[i].ids == once.results[i].ids);
    CHECK(results[i].score == once.results[i].score);
  }
}

TEST_CASE("beam search refuses what it cannot do", "[beam][errors]") {
  GenerationOptions o = beam_options(2, 4, 3);
  CHECK_THROWS_AS(BeamSearch(o, 1, 4, 1), Error);  // 2·num_beams candidates need 2 ids
  BeamSearch search(o, 1, 4, 4);
  const Ids prompt = {1};
  std::vector<float> rows(12, 0.0f);
  const std::vector<const Ids*> three(3, &prompt);
  CHECK_THROWS_AS(search.step(rows.data(), 3, 4, three), Error);  // neither 1 nor num_beams rows
  const std::vector<const Ids*> one(1, &prompt);
  CHECK_THROWS_AS(search.step(rows.data(), 1, 8, one), Error);  // wider than the vocabulary
  o.ignore_eos = true;
  CHECK_THROWS_AS(o.validate(), OptionError);  // Flax's beams always end at end-of-text
  o.ignore_eos = false;
  o.eos_id = -1;
  CHECK_THROWS_AS(o.validate(), OptionError);
}

TEST_CASE("no steps at all: the running beams, nothing generated", "[beam]") {
  GenerationOptions o = beam_options(3, 0, 3);
  BeamSearch search(o, 2, 0, 4);
  CHECK(search.done());
  const auto r = search.results();
  REQUIRE(r.size() == 3);
  CHECK(r[0].ids.empty());
  CHECK(r[0].score == 0.0);
}

namespace {

// A model whose next-token logits are hashed_logits of everything its cache slot holds: a beam
// that continues from another beam's keys and values sees other logits.
class HistoryModel : public StepModel {
 public:
  HistoryModel(int64_t vocab, int64_t slots, int64_t max_len, int64_t rows, LogitsFn fn)
      : vocab_(vocab), slots_(slots), len_(max_len), rows_(rows), fn_(std::move(fn)) {}
  int64_t vocab_size() const override { return vocab_; }
  int64_t max_slots() const override { return slots_; }
  int64_t max_len() const override { return len_; }
  int64_t max_step_rows() const override { return rows_; }
  const float* step(const std::vector<SequenceStep>& seqs) override {
    logits_.clear();
    int64_t rows = 0;
    for (const SequenceStep& s : seqs) {
      Ids& h = cache_[s.slot];
      if (size_t(s.past_len) > h.size()) throw std::logic_error("past_len is past what the slot holds");
      h.resize(size_t(s.past_len));
      h.insert(h.end(), s.tokens, s.tokens + s.n_tokens);
      rows += s.n_tokens;
      const std::vector<float> l = fn_(h);
      logits_.insert(logits_.end(), l.begin(), l.end());
    }
    if (rows > rows_) throw std::logic_error("a step carries more rows than allowed");
    return logits_.data();
  }
  void copy_prefix(int32_t src, int32_t dst, int32_t n) override {
    const Ids& from = cache_[src];
    if (size_t(n) > from.size()) throw std::logic_error("copy_prefix past what the slot holds");
    cache_[dst].assign(from.begin(), from.begin() + n);
    ++copies;
  }
  int copies = 0;

 private:
  int64_t vocab_, slots_, len_, rows_;
  LogitsFn fn_;
  std::map<int32_t, Ids> cache_;
  std::vector<float> logits_;
};

void check_same(const std::vector<GenerationResult>& got, const std::vector<GenerationResult>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("result " << i);
    CHECK(got[i].ids == want[i].ids);
    CHECK(got[i].score == want[i].score);
    CHECK(got[i].finish_reason == want[i].finish_reason);
  }
}

}  // namespace

TEST_CASE("through the generation loop, every beam continues its parent's cache", "[beam][generator]") {
  const Tokenizer tok = Tokenizer::gpt2();
  constexpr int64_t kV = 64;
  const LogitsFn fn = hashed_logits(kV, 61);
  const std::vector<Ids> prompts = {{1, 2, 3, 4, 5, 6, 7}, {9}, {1, 2, 3, 8}};
  GenerationOptions o = beam_options(4, 10, 63);
  for (const bool early : {false, true}) {
    for (const int64_t chunk : {int64_t(256), int64_t(3)}) {
      INFO("early_stopping " << early << ", prefill chunk " << chunk);
      o.beams.early_stopping = early;
      HistoryModel model(kV, 12, 32, 64, fn);
      SchedulerOptions so;
      so.prefill_chunk = chunk;
      const auto results = GenerationLoop(model, tok, so).generate(prompts, o);
      REQUIRE(results.size() == 12);
      CHECK(model.copies > 0);
      bool any_eos = false;
      for (size_t p = 0; p < prompts.size(); ++p) {
        const Run want = drive(o, prompts[p], kV, fn);
        const std::vector<GenerationResult> got(results.begin() + long(p * 4), results.begin() + long(p * 4 + 4));
        check_same(got, want.results);
        for (const GenerationResult& g : got) {
          any_eos = any_eos || g.finish_reason == FinishReason::kEos;
          Ids shown;  // the text leaves end-of-text out
          for (int32_t id : g.ids)
            if (id != 63) shown.push_back(id);
          CHECK(g.text == tok.decode(shown));
        }
      }
      CHECK(any_eos);  // the finished-set path ran too
    }
  }
}

TEST_CASE("a beam request and a greedy request share the scheduler", "[beam][generator]") {
  const Tokenizer tok = Tokenizer::gpt2();
  constexpr int64_t kV = 64;
  const LogitsFn fn = hashed_logits(kV, 71);
  HistoryModel model(kV, 5, 32, 64, fn);
  Scheduler scheduler(model, tok);
  GenerationOptions beam = beam_options(4, 8, 63);
  beam.beams.num_return_sequences = 2;
  GenerationOptions greedy;
  greedy.max_new_tokens = 8;
  greedy.eos_id = 63;
  std::vector<GenerationResult> beam_results, greedy_results;
  Request a;
  a.prompt = {4, 5, 6};
  a.options = beam;
  a.on_done = [&](RequestOutcome&& out) { beam_results = std::move(out.results); };
  Request b;
  b.prompt = {4, 5};
  b.options = greedy;
  b.on_done = [&](RequestOutcome&& out) { greedy_results = std::move(out.results); };
  scheduler.submit(std::move(a));
  scheduler.submit(std::move(b));
  scheduler.run_until_idle();
  check_same(beam_results, drive(beam, {4, 5, 6}, kV, fn).results);
  Ids h = {4, 5}, want;
  while (want.size() < 8) {
    const auto l = fn(h);
    const int32_t t = int32_t(std::max_element(l.begin(), l.end()) - l.begin());
    want.push_back(t);
    h.push_back(t);
    if (t == 63) break;
  }
  REQUIRE(greedy_results.size() == 1);
  CHECK(greedy_results[0].ids == want);
}

TEST_CASE("beams of several requests when a step carries fewer rows than all beams", "[beam][generator]") {
  const Tokenizer tok = Tokenizer::gpt2();
  constexpr int64_t kV = 64;
  const LogitsFn fn = hashed_logits(kV, 81);
  const std::vector<Ids> prompts = {{1, 2}, {3}, {4, 5, 6}};
  GenerationOptions o = beam_options(4, 8, 63);
  HistoryModel model(kV, 12, 32, 6, fn);
  const auto results = GenerationLoop(model, tok).generate(prompts, o);
  REQUIRE(results.size() == 12);
  for (size_t p = 0; p < prompts.size(); ++p) {
    const std::vector<GenerationResult> got(results.begin() + long(p * 4), results.begin() + long(p * 4 + 4));
    check_same(got, drive(o, prompts[p], kV, fn).results);
  }
}

TEST_CASE("more beams than a step carries are refused at submit", "[beam][generator][errors]") {
  const Tokenizer tok = Tokenizer::gpt2();
  HistoryModel model(64, 8, 32, 3, hashed_logits(64, 91));
  CHECK_THROWS_AS(GenerationLoop(model, tok).generate({{1}}, beam_options(4, 4, 63)), OptionError);
}
