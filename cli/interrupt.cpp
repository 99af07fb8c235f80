#include "cli/interrupt.h"

#include <signal.h>

#include <atomic>

namespace eagerlm::cli {

namespace {

volatile sig_atomic_t g_signal = 0;
struct sigaction g_previous_int, g_previous_term;

void on_signal(int signum) {
  if (g_signal != 0) {  // the second one: the default action, now
    signal(signum, SIG_DFL);
    raise(signum);
    return;
  }
  g_signal = signum;
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
