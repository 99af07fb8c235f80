#include "engine/generation/async_engine.h"

#include <algorithm>
#include <limits>

#include "engine/core/error.h"

namespace eagerlm {

namespace {
// The worker's scheduler never refuses: the queue limit is applied at submit, on the caller's thread.
SchedulerOptions unlimited_queue(SchedulerOptions o) {
  o.max_queue = std::numeric_limits<size_t>::max();
  return o;
}
}  // namespace

AsyncEngine::AsyncEngine(StepModel& model, const Tokenizer& tokenizer, const SchedulerOptions& options,
                         std::function<void()> on_worker_start)
    : model_(model), scheduler_(model, tokenizer, unlimited_queue(options)), max_queue_(options.max_queue) {
  worker_ = std::thread([this, start = std::move(on_worker_start)] { run(start); });
}

AsyncEngine::~AsyncEngine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

Ticket AsyncEngine::submit(Request request) {
  Scheduler::check(request, model_);
  std::lock_guard<std::mutex> lock(mutex_);
  if (stop_ || draining_) throw_error(ErrorCode::kBusy, "the engine is shutting down and takes no new requests");
  const size_t waiting = waiting_locked();
  if (waiting >= max_queue_)
    throw_error(ErrorCode::kBusy, "the request queue is full (" + std::to_string(waiting) +
                                      " requests waiting; max_queue " + std::to_string(max_queue_) + ")");
  const Ticket ticket = next_ticket_++;
  inbox_.push_back({ticket, std::move(request)});
  worker_idle_ = false;
  wake_.notify_one();
  return ticket;
}

void AsyncEngine::cancel(Ticket ticket) {
  std::lock_guard<std::mutex> lock(mutex_);
  cancels_.push_back(ticket);
  wake_.notify_one();
}

void AsyncEngine::drain(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  draining_ = true;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // (A timeout too large for the clock means no limit.)
  const bool bounded = timeout < std::chrono::hours(24 * 365);
  while (!worker_idle_) {
    if (!bounded) {
      idle_.wait(lock);
    } else if (idle_.wait_until(lock, deadline) == std::cv_status::timeout) {
      break;
    }
  }
  if (!worker_idle_) {
    for (const auto& [ticket, request] : inbox_) cancels_.push_back(ticket);
    for (Ticket t = 1; t < next_ticket_; ++t) cancels_.push_back(t);
    wake_.notify_one();
    idle_.wait(lock, [&] { return worker_idle_; });
  }
}

size_t AsyncEngine::waiting_locked() const { return inbox_.size() + in_transit_ + size_t(stats_.queued); }

SchedulerStats AsyncEngine::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  SchedulerStats s = stats_;
  s.queued = int64_t(waiting_locked());
  return s;
}

void AsyncEngine::run(std::function<void()> on_worker_start) {
  if (on_worker_start) on_worker_start();
  std::deque<std::pair<Ticket, Request>> arrived;
  std::vector<Ticket> cancelled;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || !inbox_.empty() || !cancels_.empty() || !scheduler_.idle(); });
      arrived.swap(inbox_);
      in_transit_ = arrived.size();  // still waiting, though neither in inbox_ nor in stats_ yet
      cancelled.swap(cancels_);
      if (stop_) {  // everything left is cancelled
        for (const auto& [ticket, request] : arrived) cancelled.push_back(ticket);
        for (const auto& [ticket, id] : submitted_) cancelled.push_back(ticket);
      }
    }
    for (auto& [ticket, request] : arrived) {
      // Forget the ticket once its request is done (on_done runs inside the scheduler).
      DoneCallback done = std::move(request.on_done);
      request.on_done = [this, ticket = ticket, done = std::move(done)](RequestOutcome&& out) {
        const auto it = submitted_.find(ticket);
        if (it != submitted_.end()) {
          tickets_.erase(it->second);
          submitted_.erase(it);
        }
        {
          // Whoever learns of the end from on_done sees stats without this request.
          std::lock_guard<std::mutex> lock(mutex_);
          stats_ = scheduler_.stats();
        }
        if (done) done(std::move(out));
      };
      // A request holds its slot by its first token: whoever sees that token sees stats that no
      // longer count it as waiting (the step that admitted it has not published them yet).
      if (request.on_token)
        request.on_token = [this, first = true, token = std::move(request.on_token)](const StreamEvent& e) mutable {
          if (first) {
            first = false;
            std::lock_guard<std::mutex> lock(mutex_);
            stats_ = scheduler_.stats();
          }
          return token(e);
        };
      // A request cancelled before it reached the scheduler still gets its on_done.
      const bool cancelled_early = std::find(cancelled.begin(), cancelled.end(), ticket) != cancelled.end();
      const DoneCallback report_failure = request.on_done;  // submit() consumes the request
      // Once the scheduler holds it, its stats count it: one count moves from in_transit_ to
      // stats_ under the lock, so submit() never sees a waiting request in neither.
      const auto handed_over = [this] {
        std::lock_guard<std::mutex> lock(mutex_);
        stats_ = scheduler_.stats();
        --in_transit_;
      };
      try {
        const RequestId id = scheduler_.submit(std::move(request));
        submitted_[ticket] = id;
        tickets_[id] = ticket;
        handed_over();
        if (cancelled_early) scheduler_.cancel(id);
      } catch (...) {
        handed_over();
        RequestOutcome out;
        out.error = std::current_exception();
        report_failure(std::move(out));
      }
    }
    arrived.clear();
    for (Ticket t : cancelled) {
      const auto it = submitted_.find(t);
      if (it != submitted_.end()) scheduler_.cancel(it->second);
    }
    cancelled.clear();
    scheduler_.step();
    std::lock_guard<std::mutex> lock(mutex_);
    stats_ = scheduler_.stats();
    worker_idle_ = scheduler_.idle() && inbox_.empty();
    if (worker_idle_) idle_.notify_all();
    if (stop_ && scheduler_.idle() && inbox_.empty()) return;
  }
}

}  // namespace eagerlm
