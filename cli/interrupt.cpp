#include "cli/interrupt.h"

#include <signal.h>
#include <time.h>

namespace eagerlm::cli {

namespace {

volatile sig_atomic_t g_signal = 0;
timespec g_first_at{};  // when the first signal came, to tell a second request from one sent twice
struct sigaction g_previous_int, g_previous_term;

// timeout(1) signals its child and then the child's whole process group, so one request can
// arrive twice a few microseconds apart; a person pressing Ctrl-C again takes longer than this.
// (server/lifecycle.cpp applies the same rule.)
constexpr long kSameRequestWithinNs = 250'000'000;

long elapsed_ns(const timespec& from, const timespec& to) {
  return (to.tv_sec - from.tv_sec) * 1'000'000'000L + (to.tv_nsec - from.tv_nsec);
}

void on_signal(int signum) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe
  if (g_signal == 0) {
    g_first_at = now;
    g_signal = signum;
    return;
  }
  if (signum == g_signal && elapsed_ns(g_first_at, now) < kSameRequestWithinNs) return;
  signal(signum, SIG_DFL);  // a second request: the default action, now
  raise(signum);
}

}  // namespace

InterruptGuard::InterruptGuard() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
}

int InterruptGuard::received() { return g_signal; }

int InterruptGuard::exit_status() { return 128 + g_signal; }

}  // namespace eagerlm::cli
