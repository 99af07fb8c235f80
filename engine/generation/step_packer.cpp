#include "engine/generation/step_packer.h"

#include <algorithm>

#include "engine/core/error.h"

namespace eagerlm {

StepPacker::StepPacker(int64_t max_rows) : max_rows_(max_rows) {
  if (max_rows < 1) throw_error(ErrorCode::kInvalidArgument, "a step must hold at least one token");
}

size_t StepPacker::add(int32_t slot, const int32_t* tokens, int32_t count, int32_t start) {
  if (count < 1 || !tokens) throw_error(ErrorCode::kInvalidArgument, "a sequence to feed needs at least one token");
  pending_.push_back({slot, start, count, 0, tokens});
  return pending_.size() - 1;
}

const std::vector<SequenceStep>& StepPacker::next() {
  step_.clear();
  which_.clear();
  completes_.clear();
  int64_t rows = 0;
  for (size_t i = next_pending_; i < pending_.size() && rows < max_rows_; ++i) {
    Pending& p = pending_[i];
    if (p.fed == p.count) continue;
    const int32_t n = int32_t(std::min<int64_t>(p.count - p.fed, max_rows_ - rows));
    step_.push_back({p.slot, p.start + p.fed, p.tokens + p.fed, n});
    which_.push_back(i);
    p.fed += n;
    completes_.push_back(p.fed == p.count ? 1 : 0);
    rows += n;
  }
  while (next_pending_ < pending_.size() && pending_[next_pending_].fed == pending_[next_pending_].count)
    ++next_pending_;
  return step_;
}

}  // namespace eagerlm
