// A one-line progress bar on standard error for long work (loading, initializing, scoring). Draws
// only when standard error is a terminal and the caller is not in --json mode. Counts are shown
// divided by `scale` and followed by `unit` (bytes as MB by default).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace eagerlm::cli {

class ProgressBar {
 public:
  ProgressBar(std::string label, bool enabled, std::string unit = "MB", double scale = 1e6);
  ~ProgressBar();
  void update(size_t done, size_t total);  // cheap to call often: redraws at most ~20 times/s
  void finish();

 private:
  std::string label_;
  bool enabled_;
  std::string unit_;
  double scale_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace eagerlm::cli
