#include "server/lifecycle.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace eagerlm::server {

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::kLoading: return "loading";
    case Phase::kReady: return "ready";
    case Phase::kDraining: return "draining";
  }
  return "?";
}

namespace {

int g_signal_pipe = -1;  // the write end, for the handler

void on_signal(int sig) {
  const int saved = errno;
  const unsigned char byte = static_cast<unsigned char>(sig);
  if (g_signal_pipe >= 0) (void)!::write(g_signal_pipe, &byte, 1);  // async-signal-safe
  errno = saved;
}

}  // namespace

void Lifecycle::watch_signals() {
  if (::pipe2(pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    std::perror("eagerlm: pipe");
    std::exit(1);
  }
  g_signal_pipe = pipe_[1];
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &previous_int_);
  sigaction(SIGTERM, &sa, &previous_term_);
  watching_ = true;
  watcher_ = std::thread([this] {
    // timeout(1) signals its child and then the child's process group: one request can arrive
    // twice at once, so the same signal within 250 ms of the first is not a second request
    // (cli/interrupt.cpp applies the same rule).
    constexpr auto kSameRequestWithin = std::chrono::milliseconds(250);
    int received = 0;
    std::chrono::steady_clock::time_point received_at;
    while (watching_) {
      pollfd p{pipe_[0], POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;  // re-check watching_ every 100 ms
      unsigned char byte = 0;
      if (::read(pipe_[0], &byte, 1) != 1) continue;
      const int sig = byte;
      const auto now = std::chrono::steady_clock::now();
      if (received == sig && now - received_at < kSameRequestWithin) continue;
      if (received != 0) {
        std::fprintf(stderr, "eagerlm: second signal (%d): exiting now\n", sig);
        std::_Exit(128 + sig);
      }
      received = sig;
      received_at = now;
      std::fprintf(stderr, "eagerlm: signal %d: draining (a second signal exits at once)\n", sig);
      request_stop(sig);
    }
  });
}

void Lifecycle::request_stop(int signal_number) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_) return;
    signal_ = signal_number;
    stop_ = true;
  }
  stopped_.notify_all();
}

int Lifecycle::wait_for_stop() {
  std::unique_lock<std::mutex> lock(mutex_);
  stopped_.wait(lock, [&] { return stop_.load(); });
  return signal_;
}

Lifecycle::~Lifecycle() {
  if (!watcher_.joinable()) return;
  watching_ = false;
  watcher_.join();
  sigaction(SIGINT, &previous_int_, nullptr);
  sigaction(SIGTERM, &previous_term_, nullptr);
  g_signal_pipe = -1;
  ::close(pipe_[0]);
  ::close(pipe_[1]);
}

}  // namespace eagerlm::server
