// The scheduler on a worker thread of its own, behind a thread-safe interface: submit and
// cancel from any thread, at any time; the worker steps whenever there is work and sleeps when
// there is none. Callbacks (Request::on_token, on_done) run on the worker thread. This is what
// the public eagerlm::Engine, the server and the Python package drive.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/generation/scheduler.h"

namespace eagerlm {

using Ticket = uint64_t;  // an AsyncEngine request's id (not the scheduler's)

class AsyncEngine {
 public:
  // The model is used by the worker thread only from here on. on_worker_start runs on the
  // worker thread before its first step (e.g. to set its CPU thread count).
  AsyncEngine(StepModel& model, const Tokenizer& tokenizer, const SchedulerOptions& options,
              std::function<void()> on_worker_start = {});
  // Cancels everything still queued or running (their on_done is called) and joins the worker.
  ~AsyncEngine();
  AsyncEngine(const AsyncEngine&) = delete;
  AsyncEngine& operator=(const AsyncEngine&) = delete;

  // Checks the request now (throws as Scheduler::check; Error(kBusy) when max_queue requests
  // are already waiting or the engine is draining) and hands it to the worker.
  Ticket submit(Request request);
  // Ends it at the worker's next step boundary (on_done with FinishReason::kCancelled). Unknown
  // or finished tickets are ignored.
  void cancel(Ticket ticket);
  // Refuses new requests, waits up to `timeout` for the running and queued ones to finish, then
  // cancels the rest. Returns when nothing is left.
  void drain(std::chrono::milliseconds timeout);

  SchedulerStats stats() const;  // as of the last step
  // The scheduler's options as it resolved them (prefill_chunk 0 replaced by the model's).
  const SchedulerOptions& options() const { return scheduler_.options(); }

 private:
  void run(std::function<void()> on_worker_start);
  // Requests accepted and not yet in a slot: the inbox, those the worker is handing to the
  // scheduler, and the scheduler's queue as of stats_. Needs mutex_.
  size_t waiting_locked() const;

  StepModel& model_;
  Scheduler scheduler_;
  size_t max_queue_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;  // work arrived, or stop
  std::condition_variable idle_;  // the worker has nothing left (for drain)
  std::deque<std::pair<Ticket, Request>> inbox_;
  std::vector<Ticket> cancels_;
  size_t in_transit_ = 0;  // taken from inbox_, not yet counted by stats_
  Ticket next_ticket_ = 1;
  bool stop_ = false, draining_ = false, worker_idle_ = true;
  SchedulerStats stats_;
  std::map<Ticket, RequestId> submitted_;  // worker thread only
  std::map<RequestId, Ticket> tickets_;    // worker thread only
  std::thread worker_;
};

}  // namespace eagerlm
