#include "engine/generation/stop_strings.h"

#include <algorithm>

namespace eagerlm {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
  stops_.erase(std::remove(stops_.begin(), stops_.end(), std::string()), stops_.end());
}

size_t StopStringMatcher::safe_prefix_length() const {
  // The earliest position from which held_'s tail is a proper prefix of some stop string.
  size_t cut = held_.size();
  for (const auto& s : stops_) {
    const size_t max_tail = std::min(s.size() - 1, held_.size());
    for (size_t len = max_tail; len > 0; --len)
      if (held_.compare(held_.size() - len, len, s, 0, len) == 0) {
        cut = std::min(cut, held_.size() - len);
        break;
      }
  }
  // Never split a UTF-8 character: move back to a character start.
  while (cut > 0 && cut < held_.size() && (static_cast<unsigned char>(held_[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

std::string StopStringMatcher::push(const std::string& piece) {
  if (stopped_) return {};
  held_ += piece;
  size_t first = std::string::npos;
  for (const auto& s : stops_) first = std::min(first, held_.find(s));
  std::string out;
  if (first != std::string::npos) {
    out = held_.substr(0, first);
    held_.clear();
    stopped_ = true;
  } else {
    const size_t safe = safe_prefix_length();
    out = held_.substr(0, safe);
    held_.erase(0, safe);
  }
  text_ += out;
  return out;
}

std::string StopStringMatcher::finish() {
  std::string out;
  out.swap(held_);
  text_ += out;
  return out;
}

}  // namespace eagerlm
