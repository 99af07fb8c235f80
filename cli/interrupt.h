// SIGINT and SIGTERM while a command generates: the first one only sets a flag, which the command
// polls between tokens, so it can stop and print what it has (valid JSON included) and exit with
// 128 + the signal's number; a second one ends the process at once, as the default action would.
// The same signal within 250 ms of the first counts as the first one delivered twice
// (timeout(1) sends it to the child and to its process group).
#pragma once

namespace eagerlm::cli {

class InterruptGuard {
 public:
  InterruptGuard();   // installs the handlers
  ~InterruptGuard();  // restores the previous ones
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  // The signal received (SIGINT or SIGTERM), or 0.
  static int received();
  // The exit status a command interrupted by received() reports: 130 for SIGINT, 143 for SIGTERM.
  static int exit_status();
};

}  // namespace eagerlm::cli
