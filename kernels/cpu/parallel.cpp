// The kernels' thread pool (parallel.h). Compiled once, not per ISA variant: one pool a process.
//
// A call publishes its job and bumps `epoch_`, whose low 8 bits say how many threads take part;
// workers 1 .. participants-1 run tasks, the caller is participant 0. Workers spin on `epoch_`
// for kSpin after their last job (the next region of a decode step comes microseconds later),
// then sleep on it (a futex); the caller wakes sleepers only when there are any. The caller
// waits for its participants to finish before it returns, so a job's data is never read after.
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
    next_.store(0, std::memory_order_relaxed);
    error_ = nullptr;
    busy_.store(threads - 1, std::memory_order_relaxed);
    sequence_ = (sequence_ + 1) & 0xffffffu;
    epoch_.store(sequence_ << 8 | uint32_t(threads));  // seq_cst: pairs with the sleepers' count
    if (sleepers_.load() > 0) epoch_.notify_all();

    t_in_task = true;
    work();
    t_in_task = false;
    for (int spins = 0; busy_.load(std::memory_order_acquire) != 0; ++spins) {
      if (spins < 100000) {
        cpu_relax();
      } else {
        std::this_thread::yield();  // a worker lost its core; let it have ours
      }
    }
    if (error_) std::rethrow_exception(error_);
  }

  // After fork() the child has no workers: every later call runs on the calling thread.
  void disable() { disabled_.store(true); }

 private:
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
    }
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
    for (;;) {
      const uint32_t e = wait_for_change(seen);
      seen = e;
      if (index >= int(e & 0xffu)) continue;  // not a participant of this job
      work();
      busy_.fetch_sub(1, std::memory_order_release);
    }
  }

  uint32_t wait_for_change(uint32_t seen) {
    auto deadline = std::chrono::steady_clock::now() + kSpin;
    for (int spins = 1;; ++spins) {
      const uint32_t e = epoch_.load(std::memory_order_acquire);
      if (e != seen) return e;
      cpu_relax();
      if (spins % 256 == 0 && std::chrono::steady_clock::now() > deadline) break;
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
  std::atomic<int> busy_{0};  // participating workers not yet done
  std::atomic<int64_t> next_{0};
  std::atomic<bool> disabled_{false};
  uint32_t sequence_ = 0;
  // The job: written by the caller before the epoch is bumped, read by workers after.
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
