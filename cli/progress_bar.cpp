#include "cli/progress_bar.h"

#include <cstdio>

#include "cli/cli_common.h"

namespace eagerlm::cli {

ProgressBar::ProgressBar(std::string label, bool enabled, std::string unit, double scale)
    : label_(std::move(label)), enabled_(enabled && stderr_is_tty()), unit_(std::move(unit)), scale_(scale) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(size_t done, size_t total) {
  if (!enabled_ || total == 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (done < total && drawn_ && now - last_ < std::chrono::milliseconds(50)) return;
  last_ = now;
  drawn_ = true;
  constexpr int kWidth = 30;
  const double f = double(done) / double(total);
  const int fill = int(f * kWidth);
  std::fprintf(stderr, "\r%s [%.*s%*s] %3d%% %.0f/%.0f %s", label_.c_str(), fill, "##############################",
               kWidth - fill, "", int(f * 100), double(done) / scale_, double(total) / scale_, unit_.c_str());
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (enabled_ && drawn_) std::fprintf(stderr, "\r\033[K");
  drawn_ = false;
}

}  // namespace eagerlm::cli
