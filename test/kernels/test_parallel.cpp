// The kernels' thread pool (kernels/cpu/parallel.h): every task runs exactly once whatever the
// thread count, ranges partition their span at the grain, nested and concurrent calls run on
// their own thread, a task's exception reaches the caller, workers really take part, idle
// workers sleep, and a forked child still computes.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kernels/cpu/parallel.h"

namespace cpu = eagerlm::cpu;

namespace {

std::vector<int> run_counts(int64_t tasks, int threads) {
  std::vector<std::atomic<int>> counts(static_cast<size_t>(tasks));
  cpu::parallel_for(
      tasks, [&](int64_t t) { counts[size_t(t)].fetch_add(1); }, threads);
  std::vector<int> out;
  for (auto& c : counts) out.push_back(c.load());
  return out;
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

}  // namespace

TEST_CASE("parallel_for runs every task exactly once", "[kernels][parallel]") {
  for (const int threads : {1, 2, 3, 8}) {
    for (const int64_t tasks : {int64_t(0), int64_t(1), int64_t(2), int64_t(3), int64_t(7), int64_t(64), int64_t(1000)}) {
      INFO("threads=" << threads << " tasks=" << tasks);
      for (int round = 0; round < 20; ++round) {
        const auto counts = run_counts(tasks, threads);
        for (const int c : counts) REQUIRE(c == 1);
      }
    }
  }
}

TEST_CASE("parallel_ranges partitions [0, n) at the grain", "[kernels][parallel]") {
  for (const int threads : {1, 2, 3, 5}) {
    for (const int64_t n : {int64_t(1), int64_t(15), int64_t(16), int64_t(17), int64_t(100), int64_t(4099)}) {
      for (const int64_t grain : {int64_t(1), int64_t(16), int64_t(32)}) {
        INFO("threads=" << threads << " n=" << n << " grain=" << grain);
        std::mutex m;
        std::vector<std::pair<int64_t, int64_t>> ranges;
        cpu::parallel_ranges(
            n,
            [&](int64_t b, int64_t e) {
              std::lock_guard<std::mutex> lock(m);
              ranges.emplace_back(b, e);
            },
            grain, threads);
        std::sort(ranges.begin(), ranges.end());
        REQUIRE(!ranges.empty());
        REQUIRE(int64_t(ranges.size()) <= threads);
        REQUIRE(ranges.front().first == 0);
        REQUIRE(ranges.back().second == n);
        for (size_t i = 0; i < ranges.size(); ++i) {
          REQUIRE(ranges[i].first < ranges[i].second);
          if (i > 0) REQUIRE(ranges[i].first == ranges[i - 1].second);
          REQUIRE(ranges[i].first % grain == 0);
        }
      }
    }
  }
}

TEST_CASE("a call inside a task runs on that task's thread", "[kernels][parallel]") {
  std::atomic<int64_t> sum{0};
  std::atomic<bool> nested_single{true};
  cpu::parallel_for(
      8,
      [&](int64_t t) {
        if (cpu::parallel_threads() != 1) nested_single = false;
        const auto self = std::this_thread::get_id();
        cpu::parallel_for(
            10,
            [&](int64_t u) {
              if (std::this_thread::get_id() != self) nested_single = false;
              sum.fetch_add(t * 10 + u);
            },
            4);
      },
      2);
  REQUIRE(nested_single.load());
  REQUIRE(sum.load() == 79 * 80 / 2);
}

TEST_CASE("calls from several threads at once all complete", "[kernels][parallel]") {
  constexpr int kCallers = 4, kRounds = 200;
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int r = 0; r < kRounds; ++r) {
        const int64_t tasks = 1 + (c * 7 + r) % 50;
        const auto counts = run_counts(tasks, 2);
        for (const int k : counts) wrong += k != 1;
      }
    });
  }
  for (auto& t : callers) t.join();
  REQUIRE(wrong.load() == 0);
}

TEST_CASE("a task's exception reaches the caller and the pool goes on", "[kernels][parallel]") {
  for (int round = 0; round < 10; ++round) {
    REQUIRE_THROWS_WITH(cpu::parallel_for(
                            16,
                            [&](int64_t t) {
                              if (t == 11) throw std::runtime_error("task 11 failed");
                            },
                            2),
                        "task 11 failed");
    const auto counts = run_counts(100, 2);
    for (const int c : counts) REQUIRE(c == 1);
  }
}

TEST_CASE("a worker takes part and idle workers sleep", "[kernels][parallel]") {
  std::mutex m;
  std::set<std::thread::id> ids;
  cpu::parallel_for(
      8,
      [&](int64_t) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        std::lock_guard<std::mutex> lock(m);
        ids.insert(std::this_thread::get_id());
      },
      2);
  REQUIRE(ids.size() == 2);

  // Workers spin ~2 ms after a job, then block: over 200 ms idle the process should use almost
  // no CPU time (two spinning workers would use ~400 ms).
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double before = cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  REQUIRE(cpu_seconds() - before < 0.05);
}

TEST_CASE("a forked child computes on its own thread", "[kernels][parallel]") {
  run_counts(64, 2);  // the pool has its worker before the fork
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const auto counts = run_counts(64, 2);
    int bad = 0;
    for (const int c : counts) bad += c != 1;
    _exit(bad == 0 ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
}
