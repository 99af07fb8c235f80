#include "engine/generation/scoring.h"

#include <algorithm>
#include <string>

#include "engine/core/error.h"
#include "engine/generation/step_packer.h"

namespace eagerlm {

namespace {

[[noreturn]] void bad_request(size_t i, const std::string& what) {
  throw_error(ErrorCode::kInvalidArgument, "sequence " + std::to_string(i) + " " + what);
}

}  // namespace

void check_score_requests(const std::vector<ScoreRequest>& requests, int64_t vocab_size, int64_t max_len) {
  for (size_t i = 0; i < requests.size(); ++i) {
    const ScoreRequest& r = requests[i];
    if (r.count < 1 || !r.ids) bad_request(i, "is empty");
    if (r.first < 1 || r.first > r.count)
      bad_request(
          i, "scores from token " + std::to_string(r.first) + "; expected 1 to its length " + std::to_string(r.count));
    if (int64_t(r.count) - 1 > max_len)
      bad_request(i, "has " + std::to_string(r.count) + " tokens; at most " + std::to_string(max_len + 1) +
                         " can be scored here (all but the last are fed, at most max_len " + std::to_string(max_len) +
                         ")");
    for (int32_t k = 0; k < r.count; ++k)
      if (r.ids[k] < 0 || r.ids[k] >= vocab_size)
        bad_request(i, "has token id " + std::to_string(r.ids[k]) + " at index " + std::to_string(k) +
                           ", outside the vocabulary [0, " + std::to_string(vocab_size) + ")");
  }
}

int64_t scoring_slots(const std::vector<ScoreRequest>& requests, int64_t step_rows) {
  int64_t longest_fed = 1;
  for (const ScoreRequest& r : requests) longest_fed = std::max<int64_t>(longest_fed, int64_t(r.count) - 1);
  const int64_t fill = (std::max<int64_t>(step_rows, 1) + longest_fed - 1) / longest_fed;
  return std::clamp<int64_t>(fill, 1, std::max<int64_t>(int64_t(requests.size()), 1));
}

std::vector<std::vector<float>> score_sequences(StepModel& model, const std::vector<ScoreRequest>& requests,
                                                const ScoreProgress& progress) {
  if (!model.scores_targets())
    throw_error(ErrorCode::kUnsupported, "score_sequences: the model was not set up to score targets");
  check_score_requests(requests, model.vocab_size(), model.max_len());
  std::vector<std::vector<float>> out(requests.size());
  int64_t total = 0, fed = 0;
  // A request with nothing to score (one token, or first == count) is not fed at all.
  auto scores_any = [](const ScoreRequest& r) { return r.first < r.count; };
  for (size_t i = 0; i < requests.size(); ++i) {
    out[i].reserve(size_t(requests[i].count - requests[i].first));
    if (scores_any(requests[i])) total += requests[i].count - 1;
  }

  const size_t slots = size_t(std::max<int64_t>(model.max_slots(), 1));
  std::vector<size_t> members;  // request index of each sequence added to the packer
  std::vector<int32_t> targets;
  for (size_t g0 = 0; g0 < requests.size(); g0 += slots) {
    // One group: a slot per request.
    StepPacker packer(model.max_step_rows());
    members.clear();
    for (size_t i = g0; i < std::min(requests.size(), g0 + slots); ++i) {
      if (!scores_any(requests[i])) continue;
      packer.add(int32_t(i - g0), requests[i].ids, requests[i].count - 1);
      members.push_back(i);
    }
    while (!packer.done()) {
      const std::vector<SequenceStep>& step = packer.next();
      // Token at position p predicts ids[p + 1]; positions before first - 1 are context only.
      targets.clear();
      for (size_t k = 0; k < step.size(); ++k) {
        const ScoreRequest& r = requests[members[packer.sequences()[k]]];
        for (int32_t j = 0; j < step[k].n_tokens; ++j) {
          const int32_t next = step[k].past_len + j + 1;
          targets.push_back(next >= r.first ? r.ids[next] : -1);
        }
      }
      const float* logprobs = model.step_logprobs(step, targets);
      size_t row = 0, at = 0;
      for (size_t k = 0; k < step.size(); ++k) {
        std::vector<float>& dst = out[members[packer.sequences()[k]]];
        for (int32_t j = 0; j < step[k].n_tokens; ++j, ++row)
          if (targets[row] != -1) dst.push_back(logprobs[at++]);
        fed += step[k].n_tokens;
      }
      if (progress) progress(fed, total);
    }
  }
  return out;
}

}  // namespace eagerlm
