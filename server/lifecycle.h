// The server's life: loading (the port answers, /health says "loading", work is refused with
// 503), ready, draining (SIGINT/SIGTERM: running requests finish, new ones get 503), stopped.
// Signals: a handler (any thread may take them: OpenBLAS starts its threads before main, so
// blocking them cannot cover every thread) writes the number to a pipe; a thread of our own reads
// it. The first asks the server to stop; a second ends the process at once with 128 + its number.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <signal.h>

namespace eagerlm::server {

enum class Phase { kLoading, kReady, kDraining };
const char* phase_name(Phase phase);  // "loading", "ready", "draining"

class Lifecycle {
 public:
  Lifecycle() = default;
  ~Lifecycle();
  Lifecycle(const Lifecycle&) = delete;
  Lifecycle& operator=(const Lifecycle&) = delete;

  Phase phase() const { return phase_.load(std::memory_order_acquire); }
  // Publishes everything written before it (the model, the engine) to handlers that see kReady.
  void set_phase(Phase phase) { phase_.store(phase, std::memory_order_release); }

  // Installs the SIGINT and SIGTERM handlers and starts the thread that acts on them; the
  // destructor restores the previous handlers. One Lifecycle at a time may watch signals.
  void watch_signals();
  // Asks the server to stop (a signal does this; so does a listener that failed).
  void request_stop(int signal_number);
  // Blocks until a stop was asked for; the signal's number (0: not a signal).
  int wait_for_stop();
  bool stop_requested() const { return stop_.load(); }

 private:
  std::atomic<Phase> phase_{Phase::kLoading};
  std::mutex mutex_;
  std::condition_variable stopped_;
  std::atomic<bool> stop_{false}, watching_{false};
  int signal_ = 0;
  struct sigaction previous_int_{}, previous_term_{};
  int pipe_[2] = {-1, -1};
  std::thread watcher_;
};

}  // namespace eagerlm::server
