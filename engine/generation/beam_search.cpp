#include "engine/generation/beam_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "engine/core/error.h"
#include "engine/generation/sampling.h"

namespace eagerlm {

namespace {

// Flax's "very large negative" score: the non-first beams start with it, finished candidates
// are pushed out of the running set with it, and running candidates out of the finished set.
constexpr float kVeryNegative = -1.0e7f;

// jax.lax.top_k's order: larger first, equal values by lower index. NaN counts as the largest so
// that the order stays total whatever the logits hold.
bool before(const float* v, int64_t a, int64_t b) {
  const float x = v[a], y = v[b];
  const bool nx = std::isnan(x), ny = std::isnan(y);
  if (nx != ny) return nx;
  if (!nx && x != y) return x > y;
  return a < b;
}

// Indices of the k best of v[0, n), best first.
std::vector<int64_t> top_k(const float* v, int64_t n, int64_t k) {
  std::vector<int64_t> best;
  best.reserve(size_t(k) + 1);
  for (int64_t i = 0; i < n; ++i) {
    if (int64_t(best.size()) == k && !before(v, i, best.back())) continue;
    auto at = std::upper_bound(best.begin(), best.end(), i, [&](int64_t a, int64_t b) { return before(v, a, b); });
    best.insert(at, i);
    if (int64_t(best.size()) > k) best.pop_back();
  }
  return best;
}

// jax.nn.log_softmax in float32: (x - max) - log(sum(exp(x - max))). The sum is taken in double
// and rounded once; XLA's float sum may differ from it by an ulp of a per-row constant.
void log_softmax(const float* x, int64_t n, float* out) {
  const float mx = *std::max_element(x, x + n);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(double(x[i] - mx));
  const float lse = float(std::log(sum));
  for (int64_t i = 0; i < n; ++i) out[i] = (x[i] - mx) - lse;
}

}  // namespace

struct BeamSearch::State {
  GenerationOptions options;
  int64_t prompt_len = 0, max_new_tokens = 0, vocab = 0;
  int32_t beams = 0;
  int64_t generated = 0;  // Flax's cur_len minus the prompt length
  bool done = false;
  // Flax's running_sequences and running_scores: generated ids (the prompt is the caller's).
  std::vector<std::vector<int32_t>> running;
  std::vector<float> running_scores;
  // Flax's sequences, scores and is_sent_finished. They start as num_beams placeholders (Flax's
  // all-pad rows scored -1e7) that only finished hypotheses displace.
  struct Kept {
    std::vector<int32_t> ids;
    float score = kVeryNegative;
    bool finished = false;
    bool placeholder = true;
  };
  std::vector<Kept> kept;
  std::vector<float> log_probs, row;  // scratch
};

BeamSearch::BeamSearch(const GenerationOptions& options, int64_t prompt_len, int64_t max_new_tokens, int64_t vocab)
    : state_(std::make_shared<State>()) {
  State& s = *state_;
  if (options.beams.num_beams < 1) throw OptionError("num_beams", ">= 1", std::to_string(options.beams.num_beams));
  // Flax takes the 2·num_beams best of num_beams·vocab candidates.
  if (vocab < 2) throw_error(ErrorCode::kInvalidArgument, "beam search needs a vocabulary of at least 2 ids");
  if (prompt_len < 1) throw_error(ErrorCode::kInvalidArgument, "beam search needs a non-empty prompt");
  if (max_new_tokens < 0) throw OptionError("max_new_tokens", ">= 0", std::to_string(max_new_tokens));
  s.options = options;
  s.prompt_len = prompt_len;
  s.max_new_tokens = max_new_tokens;
  s.vocab = vocab;
  s.beams = options.beams.num_beams;
  s.running.assign(size_t(s.beams), {});
  // Only the first beam is live at first: the others hold the same prompt and must not be
  // chosen over it (Flax's [0, -1e7, -1e7, ...]).
  s.running_scores.assign(size_t(s.beams), kVeryNegative);
  s.running_scores[0] = 0.0f;
  s.kept.assign(size_t(s.beams), State::Kept{});
  s.done = max_new_tokens == 0;
}

std::vector<BeamChoice> BeamSearch::step(const float* logits, int64_t rows, int64_t vocab,
                                         const std::vector<const std::vector<int32_t>*>& histories) {
  State& s = *state_;
  if (s.done) return {};
  const int64_t k = s.beams;
  const bool first = s.generated == 0;
  // The first step may pass the prompt's row once for all beams (they are identical).
  if (!(rows == k || (first && rows == 1)))
    throw_error(ErrorCode::kInternal,
                "beam search step: " + std::to_string(rows) + " logits rows for " + std::to_string(k) + " beams");
  if (vocab < 2 || vocab > s.vocab)
    throw_error(ErrorCode::kInternal,
                "beam search step: vocabulary " + std::to_string(vocab) + " (at most " + std::to_string(s.vocab) + ")");
  if (int64_t(histories.size()) != rows)
    throw_error(ErrorCode::kInternal, "beam search step: " + std::to_string(histories.size()) + " histories for " +
                                          std::to_string(rows) + " rows");
  for (int64_t b = 0; b < rows; ++b)
    if (int64_t(histories[size_t(b)]->size()) != s.prompt_len + s.generated)
      throw_error(ErrorCode::kInternal, "beam search step: a history of " +
                                            std::to_string(histories[size_t(b)]->size()) + " tokens, expected " +
                                            std::to_string(s.prompt_len + s.generated));

  // 1. Log-probabilities, then the processors (on log-probabilities, where Flax applies them),
  // then each beam's running score.
  const int32_t eos = s.options.eos_id;
  std::vector<int32_t> suppress;
  if (s.generated < s.options.min_new_tokens) suppress.push_back(eos);
  s.log_probs.resize(size_t(k * vocab));
  for (int64_t b = 0; b < k; ++b) {
    float* lp = s.log_probs.data() + b * vocab;
    const int64_t r = rows == 1 ? 0 : b;
    if (r == b || b == 0) {
      log_softmax(logits + r * vocab, vocab, lp);
      process_logits(s.options.sampling, lp, vocab, TokenHistory{*histories[size_t(r)], size_t(s.prompt_len)},
                     suppress);
    } else {
      std::copy(s.log_probs.begin(), s.log_probs.begin() + vocab, lp);  // the same row as beam 0's
    }
  }
  for (int64_t b = 0; b < k; ++b) {
    float* lp = s.log_probs.data() + b * vocab;
    const float add = s.running_scores[size_t(b)];
    for (int64_t t = 0; t < vocab; ++t) lp[t] += add;
  }

  // 2. The 2·num_beams best continuations over all beams.
  const int64_t k2 = 2 * k;
  const std::vector<int64_t> top = top_k(s.log_probs.data(), k * vocab, k2);
  std::vector<int32_t> parent(static_cast<size_t>(k2)), token(static_cast<size_t>(k2));
  std::vector<float> score(static_cast<size_t>(k2)), as_running(static_cast<size_t>(k2));
  std::vector<bool> ends(static_cast<size_t>(k2));
  for (int64_t c = 0; c < k2; ++c) {
    parent[size_t(c)] = int32_t(top[size_t(c)] / vocab);
    token[size_t(c)] = int32_t(top[size_t(c)] % vocab);
    score[size_t(c)] = s.log_probs[size_t(top[size_t(c)])];
    ends[size_t(c)] = token[size_t(c)] == eos;
    as_running[size_t(c)] = score[size_t(c)] + (ends[size_t(c)] ? kVeryNegative : 0.0f);
  }

  // 3. The next running beams: the best num_beams of them that did not just end.
  const std::vector<int64_t> next = top_k(as_running.data(), k2, k);
  std::vector<std::vector<int32_t>> running(static_cast<size_t>(k));
  std::vector<float> running_scores(static_cast<size_t>(k));
  std::vector<BeamChoice> choices(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) {
    const size_t c = size_t(next[size_t(i)]);
    running[size_t(i)] = s.running[size_t(parent[c])];
    running[size_t(i)].push_back(token[c]);
    running_scores[size_t(i)] = as_running[c];
    choices[size_t(i)] = {rows == 1 ? 0 : parent[c], token[c]};
  }

  // 4. Finished candidates, length-penalized by the generated length (end-of-text included),
  // merged with the finished ones kept so far; the rest are pushed below them.
  bool all_finished = true;
  for (const State::Kept& h : s.kept) all_finished = all_finished && h.finished;
  const bool full = all_finished && s.options.beams.early_stopping;
  const float denominator = std::pow(float(s.generated + 1), s.options.beams.length_penalty);
  std::vector<float> merged(static_cast<size_t>(k + k2));
  for (int64_t j = 0; j < k; ++j) merged[size_t(j)] = s.kept[size_t(j)].score;
  for (int64_t c = 0; c < k2; ++c) {
    const bool penalize = !ends[size_t(c)] || full;
    merged[size_t(k + c)] = score[size_t(c)] / denominator + (penalize ? kVeryNegative : 0.0f);
  }
  const std::vector<int64_t> keep = top_k(merged.data(), k + k2, k);
  std::vector<State::Kept> kept(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) {
    const int64_t m = keep[size_t(i)];
    if (m < k) {
      kept[size_t(i)] = s.kept[size_t(m)];
      continue;
    }
    const size_t c = size_t(m - k);
    State::Kept& h = kept[size_t(i)];
    h.ids = s.running[size_t(parent[c])];
    h.ids.push_back(token[c]);
    h.score = merged[size_t(m)];
    h.finished = ends[c];
    h.placeholder = false;
  }
  s.running = std::move(running);
  s.running_scores = std::move(running_scores);
  s.kept = std::move(kept);
  ++s.generated;

  // 5. Flax's loop condition: below the maximum length, not every beam finished under
  // early_stopping, and the best running beam could still beat the worst finished one.
  const float best_running = s.running_scores[0] / std::pow(float(s.generated), s.options.beams.length_penalty);
  float worst_kept = s.kept[0].score;
  for (const State::Kept& h : s.kept) worst_kept = std::min(worst_kept, h.score);
  bool improvable = false;
  all_finished = true;
  for (const State::Kept& h : s.kept) {
    improvable = improvable || best_running > (h.finished ? worst_kept : kVeryNegative);
    all_finished = all_finished && h.finished;
  }
  const bool open = !(all_finished && s.options.beams.early_stopping);
  s.done = !(s.generated < s.max_new_tokens && open && improvable);
  return choices;
}

bool BeamSearch::done() const { return state_->done; }

std::vector<GenerationResult> BeamSearch::results() const {
  const State& s = *state_;
  const size_t count = size_t(std::clamp(s.options.beams.num_return_sequences, 1, s.beams));
  bool any_finished = false;
  for (const State::Kept& h : s.kept) any_finished = any_finished || h.finished;
  std::vector<GenerationResult> out(count);
  for (size_t i = 0; i < count; ++i) {
    GenerationResult& g = out[i];
    if (any_finished) {
      const State::Kept& h = s.kept[i];
      g.ids = h.ids;  // a placeholder has none
      g.score = double(h.score);
      g.finish_reason = h.finished ? FinishReason::kEos : FinishReason::kLength;
    } else {
      // Flax returns the running beams with their raw (not length-penalized) scores.
      g.ids = s.running[i];
      g.score = double(s.running_scores[i]);
      g.finish_reason = FinishReason::kLength;
    }
  }
  return out;
}

}  // namespace eagerlm
