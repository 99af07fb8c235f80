// The kernels' thread pool (kernels/cpu/parallel.h): every task runs exactly once whatever the
// thread count, ranges partition their span at the grain, nested and concurrent calls run on
// their own thread, a task's exception reaches the caller, workers really take part, idle
// workers sleep, and a forked child still computes.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
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

// The pool's workers as /proc sees them: run state (R running or runnable, S asleep) and how
// often each was switched out.
struct WorkerState {
  std::string tid;
  char state = '?';
  long switches = 0;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<WorkerState> pool_workers() {
  std::vector<WorkerState> workers;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    const std::string dir = entry.path().string();
    if (read_file(dir + "/comm") != "eagerlm-worker\n") continue;
    WorkerState w;
    w.tid = entry.path().filename().string();
    const std::string stat = read_file(dir + "/stat");
    const size_t paren = stat.rfind(')');
    if (paren != std::string::npos && paren + 2 < stat.size()) w.state = stat[paren + 2];
    std::istringstream status(read_file(dir + "/status"));
    for (std::string line; std::getline(status, line);) {
      for (const char* key : {"voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"}) {
        if (line.rfind(key, 0) == 0) w.switches += std::stol(line.substr(std::strlen(key)));
      }
    }
    workers.push_back(w);
  }
  std::sort(workers.begin(), workers.end(), [](const auto& a, const auto& b) { return a.tid < b.tid; });
  return workers;
}

bool all_asleep(const std::vector<WorkerState>& workers) {
  return std::all_of(workers.begin(), workers.end(), [](const auto& w) { return w.state == 'S'; });
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

  // Workers spin ~2 ms after a job, then sleep. Checked on the workers themselves, not by the
  // process's CPU time (which other tests' load on a shared machine makes noisy): every worker
  // reaches sleep, and once asleep it is not woken again while the pool is idle. A worker that
  // kept spinning (yielding between looks) would stay runnable and never be seen asleep.
  std::vector<WorkerState> workers = pool_workers();
  REQUIRE(!workers.empty());
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!all_asleep(workers) && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    workers = pool_workers();
  }
  for (const auto& w : workers) {
    INFO("worker " << w.tid << " state " << w.state);
    REQUIRE(w.state == 'S');
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::vector<WorkerState> later = pool_workers();
  REQUIRE(later.size() == workers.size());
  for (size_t i = 0; i < later.size(); ++i) {
    INFO("worker " << later[i].tid << " state " << later[i].state);
    REQUIRE(later[i].tid == workers[i].tid);
    REQUIRE(later[i].state == 'S');
    REQUIRE(later[i].switches == workers[i].switches);  // never woken while idle
  }
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
