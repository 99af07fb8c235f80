// How the CPU kernels share work between threads: one process-wide pool of workers that spin a
// little before they sleep. A decode step runs ~150 parallel regions, each a few microseconds
// long; OpenMP's (libgomp's) default wait policy puts its workers to sleep between them, and on a
// virtual machine every wake-up then costs tens of microseconds (GPT-2 124M int8 decode measured
// 10.8 ms a token with libgomp's defaults, 8.1 ms with its workers kept spinning). libgomp reads
// its spin settings from the environment once, before any of our code runs, so the kernels bring
// their own pool instead; OpenMP remains only for `#pragma omp simd` and the thread-count setting
// (omp_set_num_threads, which the engine and the API set per calling thread).
//
// The pool serves one caller at a time: a call made while another thread's call runs, or from
// inside a task, runs on its own thread alone (never two pools' worth of threads on the cores).
// Which thread runs a task never changes a result: every kernel's arithmetic per element is fixed.
#pragma once

#include <cstdint>

namespace eagerlm::cpu {

// Threads a parallel call made here would use: 1 inside a task of the pool, else the calling
// thread's OpenMP thread count (omp_get_max_threads; 1 in a build without OpenMP).
int parallel_threads();

// Elements of a one-pass streaming job (fill, convert, quantize) below which another thread
// costs more to hand work to than it saves.
constexpr int64_t kMinStreamElementsPerThread = int64_t(1) << 15;

// Threads for a job of `work` units where fewer than `min_per_thread` units are not worth a
// thread of their own: parallel_threads(), capped so each thread gets at least that many, and
// at least 1.
inline int threads_for(int64_t work, int64_t min_per_thread = kMinStreamElementsPerThread) {
  const int64_t fit = work / min_per_thread;
  const int most = parallel_threads();
  return fit < 1 ? 1 : (fit < most ? int(fit) : most);
}

namespace detail {
using TaskFn = void (*)(const void* body, int64_t task);
// Runs task(body, t) for every t in [0, tasks) on up to `threads` threads, the caller among them,
// and returns when all have finished; rethrows the first exception a task threw.
void run_tasks(int64_t tasks, int threads, TaskFn task, const void* body);
}  // namespace detail

// body(t) for t in [0, tasks), tasks handed out one at a time to whichever thread is free.
template <typename Body>
void parallel_for(int64_t tasks, const Body& body, int threads = parallel_threads()) {
  if (tasks <= 0) return;
  if (threads <= 1 || tasks == 1) {
    for (int64_t t = 0; t < tasks; ++t) body(t);
    return;
  }
  detail::run_tasks(
      tasks, threads, [](const void* b, int64_t t) { (*static_cast<const Body*>(b))(t); }, &body);
}

// body(begin, end) over [0, n) cut into one contiguous range per thread (at most `threads`
// ranges), every boundary a multiple of `grain` (so ranges can keep whole blocks or cache lines).
template <typename Body>
void parallel_ranges(int64_t n, const Body& body, int64_t grain = 1, int threads = parallel_threads()) {
  if (n <= 0) return;
  const int64_t units = (n + grain - 1) / grain;
  const int64_t parts = threads < 1 ? 1 : (units < threads ? units : threads);
  if (parts <= 1) {
    body(int64_t(0), n);
    return;
  }
  auto boundary = [&](int64_t p) {
    const int64_t b = units * p / parts * grain;
    return b < n ? b : n;
  };
  parallel_for(
      parts, [&](int64_t p) { body(boundary(p), p + 1 == parts ? n : boundary(p + 1)); }, int(parts));
}

}  // namespace eagerlm::cpu
