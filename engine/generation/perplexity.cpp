#include "engine/generation/perplexity.h"

#include <algorithm>
#include <string>

#include "engine/core/error.h"

namespace eagerlm {

void check_perplexity_window(int64_t window, int64_t stride) {
  if (window < 2) throw OptionError("window", "at least 2 tokens", std::to_string(window));
  if (stride < 1 || stride > window)
    throw OptionError("stride", "1 to the window (" + std::to_string(window) + ")", std::to_string(stride));
}

std::vector<ScoreRequest> perplexity_windows(const std::vector<int32_t>& ids, int64_t window, int64_t stride) {
  check_perplexity_window(window, stride);
  const int64_t n = int64_t(ids.size());
  if (n < 2)
    throw_error(ErrorCode::kInvalidArgument,
                "perplexity needs at least 2 tokens (the first is only context), got " + std::to_string(n));
  if (n > INT32_MAX) throw_error(ErrorCode::kInvalidArgument, "perplexity: more than 2^31 - 1 tokens");
  std::vector<ScoreRequest> windows;
  int64_t previous_end = 0;
  for (int64_t begin = 0; previous_end < n; begin += stride) {
    const int64_t end = std::min(begin + window, n);
    // The window's tokens from index first on are past the previous end (stride <= window keeps
    // previous_end >= begin); the first window's first token has nothing before it.
    const int64_t first = std::max<int64_t>(1, previous_end - begin);
    windows.push_back({ids.data() + begin, int32_t(end - begin), int32_t(first)});
    previous_end = end;
  }
  return windows;
}

PerplexityResult perplexity(StepModel& model, const std::vector<int32_t>& ids, int64_t window, int64_t stride,
                            const ScoreProgress& progress) {
  const std::vector<ScoreRequest> windows = perplexity_windows(ids, window, stride);
  const std::vector<std::vector<float>> scores = score_sequences(model, windows, progress);
  PerplexityResult r;
  r.windows = int64_t(windows.size());
  r.logprobs.reserve(ids.size() - 1);
  r.positions.reserve(ids.size() - 1);
  for (size_t w = 0; w < windows.size(); ++w) {
    r.fed += windows[w].count - 1;
    const int64_t begin = windows[w].ids - ids.data();
    for (size_t k = 0; k < scores[w].size(); ++k) {
      r.logprobs.push_back(scores[w][k]);
      r.positions.push_back(begin + windows[w].first + int64_t(k));
      r.nll -= double(scores[w][k]);  // summed in double: the total carries no float32 accumulation error
    }
  }
  r.tokens = int64_t(r.logprobs.size());
  return r;
}

}  // namespace eagerlm
