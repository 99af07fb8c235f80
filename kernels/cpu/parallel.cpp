// The kernels' thread pool (parallel.h). Compiled once, not per ISA variant: one pool a process.
//
// A call publishes its job, opens it for entry and bumps `epoch_`, whose low 8 bits say how many
// threads may take part; the caller is participant 0 and works at once. A worker that sees the
// bump enters the job (a compare-and-swap on `entry_`, which names the job) and takes tasks
// until none are left. The caller waits only for tasks to finish, never for a worker to wake:
// a sleeping or descheduled worker simply leaves its share to the threads that run, so a step
// on cores shared with other programs degrades to fewer threads instead of stalling at a barrier.
// Before returning, the caller closes the job to entry and waits for the workers that entered
// to leave, so no worker touches a job after its call returned. Idle workers spin on `epoch_`
// for kSpin (the next kernel of a decode step comes microseconds later), then sleep on it (a
// futex); the caller wakes sleepers only when there are any.
#include "kernels/cpu/parallel.h"

#include "kernels/common/openmp.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace eagerlm::cpu {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// How long an idle worker spins before it sleeps: long enough to span the gaps between one
// step's kernels and between decode steps, short enough that an idle engine leaves the cores.
constexpr auto kSpin = std::chrono::microseconds(2000);
constexpr int kMaxThreads = 255;  // participants fit the epoch's low 8 bits
// Pauses between looks at the clock and yields of the core while spinning (~2-10 µs).
constexpr int kSpinsPerYield = 64;

thread_local bool t_in_task = false;

class Pool {
 public:
  void run(int64_t tasks, int threads, detail::TaskFn task, const void* body) {
    threads = std::min({threads, kMaxThreads, int(std::min<int64_t>(tasks, kMaxThreads))});
    if (threads <= 1 || t_in_task || disabled_.load(std::memory_order_relaxed)) {
      run_inline(tasks, task, body);
      return;
    }
    std::unique_lock<std::mutex> owner(owner_, std::try_to_lock);
    if (!owner.owns_lock()) {  // another thread's job is running
      run_inline(tasks, task, body);
      return;
    }
    grow(threads - 1);
    task_ = task;
    body_ = body;
    tasks_ = tasks;
    error_ = nullptr;
    next_.store(0, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    left_.store(0, std::memory_order_relaxed);
    sequence_ = sequence_ % kMaxSequence + 1;  // 1 .. kMaxSequence; 0 marks a closed job
    entry_.store(uint64_t(sequence_) << 32, std::memory_order_release);
    epoch_.store(sequence_ << 8 | uint32_t(threads));  // seq_cst: pairs with the sleepers' count
    if (sleepers_.load() > 0) epoch_.notify_all();

    t_in_task = true;
    work();
    t_in_task = false;
    wait_until([&] { return done_.load(std::memory_order_acquire) == tasks_; });
    const uint64_t entered = entry_.exchange(0, std::memory_order_acq_rel) & 0xffffffffu;
    wait_until([&] { return left_.load(std::memory_order_acquire) == entered; });
    if (error_) std::rethrow_exception(error_);
  }

  // After fork() the child has no workers: every later call runs on the calling thread.
  void disable() { disabled_.store(true); }

 private:
  static constexpr uint32_t kMaxSequence = 0xffffffu;  // the epoch keeps 24 bits of it

  // Waiting for tasks that other threads are running: spin, and give the core away now and then
  // (a yield returns at once when nothing else wants the core), so a thread that was preempted
  // in the middle of a task can get back to finish it.
  template <typename Ready>
  static void wait_until(const Ready& ready) {
    for (int spins = 1; !ready(); ++spins) {
      cpu_relax();
      if (spins % kSpinsPerYield == 0) std::this_thread::yield();
    }
  }

  static void run_inline(int64_t tasks, detail::TaskFn task, const void* body) {
    const bool was = t_in_task;
    t_in_task = true;
    try {
      for (int64_t t = 0; t < tasks; ++t) task(body, t);
    } catch (...) {
      t_in_task = was;
      throw;
    }
    t_in_task = was;
  }

  void work() {
    for (int64_t t; (t = next_.fetch_add(1, std::memory_order_relaxed)) < tasks_;) {
      try {
        task_(body_, t);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex_);
        if (!error_) error_ = std::current_exception();
      }
      done_.fetch_add(1, std::memory_order_release);
    }
  }

  // Enters job `sequence` if it is still open: only then may its fields be read.
  bool enter(uint32_t sequence) {
    uint64_t e = entry_.load(std::memory_order_acquire);
    while (uint32_t(e >> 32) == sequence) {
      if (entry_.compare_exchange_weak(e, e + 1, std::memory_order_acq_rel)) return true;
    }
    return false;
  }

  void grow(int workers) {
    while (int(workers_.size()) < workers) {
      const int index = int(workers_.size()) + 1;
      // The epoch before this job's bump: the new worker must see the bump as a change.
      const uint32_t seen = epoch_.load();
      workers_.emplace_back([this, index, seen] { worker(index, seen); });
      workers_.back().detach();  // lives as long as the process (the pool is never destroyed)
    }
  }

  void worker(int index, uint32_t seen) {
    t_in_task = true;
    // A name for top -H, perf and debuggers (and the test that checks idle workers sleep).
    pthread_setname_np(pthread_self(), "eagerlm-worker");
    for (;;) {
      const uint32_t e = wait_for_change(seen);
      seen = e;
      if (index >= int(e & 0xffu) || !enter(e >> 8)) continue;  // not asked, or already over
      work();
      left_.fetch_add(1, std::memory_order_release);
    }
  }

  uint32_t wait_for_change(uint32_t seen) {
    const auto deadline = std::chrono::steady_clock::now() + kSpin;
    for (int spins = 1;; ++spins) {
      const uint32_t e = epoch_.load(std::memory_order_acquire);
      if (e != seen) return e;
      cpu_relax();
      if (spins % kSpinsPerYield == 0) {
        if (std::chrono::steady_clock::now() > deadline) break;
        std::this_thread::yield();  // polite: on a shared core the thread with work runs first
      }
    }
    sleepers_.fetch_add(1);  // seq_cst, then the epoch is read again: no wake-up can be missed
    uint32_t e;
    while ((e = epoch_.load()) == seen) epoch_.wait(seen);
    sleepers_.fetch_sub(1);
    return e;
  }

  std::mutex owner_;  // held by the one caller whose job runs
  std::atomic<uint32_t> epoch_{0};
  std::atomic<int> sleepers_{0};
  // The open job's sequence (high 32 bits; 0 when closed) and how many workers entered it.
  std::atomic<uint64_t> entry_{0};
  std::atomic<uint64_t> left_{0};  // workers that entered and are done
  std::atomic<int64_t> next_{0};   // next task to hand out
  std::atomic<int64_t> done_{0};   // tasks finished
  std::atomic<bool> disabled_{false};
  uint32_t sequence_ = 0;
  // The job: written by the caller before it is opened, read only by workers that entered it.
  detail::TaskFn task_ = nullptr;
  const void* body_ = nullptr;
  int64_t tasks_ = 0;
  std::exception_ptr error_;
  std::mutex error_mutex_;
  std::vector<std::thread> workers_;
};

Pool& pool() {
  // Never destroyed: workers may still be spinning when static destructors run at exit.
  static Pool* p = [] {
    auto* created = new Pool;
    pthread_atfork(nullptr, nullptr, [] { pool().disable(); });
    return created;
  }();
  return *p;
}

}  // namespace

int parallel_threads() {
  if (t_in_task || omp_in_parallel()) return 1;
  return std::max(1, omp_get_max_threads());
}

namespace detail {
void run_tasks(int64_t tasks, int threads, TaskFn task, const void* body) { pool().run(tasks, threads, task, body); }
}  // namespace detail

}  // namespace eagerlm::cpu
