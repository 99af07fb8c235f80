// eagerlm-bench-target-logprobs [--vocab V] [--d D] [--reps N]: the fused scoring head against
// what it replaces, on the CPU kernels, for GPT-2's shapes by default: for steps of 1, 64 and
// 512 rows, the median time of target_logprobs (log p of one target per row, by vocabulary
// blocks) and of linear_transposed into the full [rows, vocab] logits followed by a row softmax
// (the unfused path, whose logits buffer alone is rows × vocab × 4 bytes), with the GFLOP/s of
// the product both share. Also the process CPU time of each (all threads): on a machine shared
// with other work, wall time measures the neighbours as much as the kernel.
#include <time.h>
#include <algorithm>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_ops.h"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) * 1e-6;
}

struct Timing {
  double wall_ms, cpu_ms;  // medians
};

template <typename F>
Timing median_ms(int64_t reps, F f) {
  f();  // warm: scratch, page faults, OpenMP team
  std::vector<double> wall, cpu;
  for (int64_t i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    const double c0 = cpu_ms();
    f();
    cpu.push_back(cpu_ms() - c0);
    wall.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return {median(wall), median(cpu)};
}

}  // namespace

int main(int argc, char** argv) {
  int64_t vocab = 50257, d = 768, reps = 5;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    int64_t* target = flag == "--vocab" ? &vocab : flag == "--d" ? &d : flag == "--reps" ? &reps : nullptr;
    if (!target) {
      std::fprintf(stderr, "usage: %s [--vocab V] [--d D] [--reps N]\n", argv[0]);
      return 2;
    }
    char* end = nullptr;
    const long long v = i + 1 < argc ? std::strtoll(argv[i + 1], &end, 10) : 0;
    if (i + 1 >= argc || *end != '\0' || v <= 0) {
      std::fprintf(stderr, "%s: %s expects a positive integer\n", argv[0], flag.c_str());
      return 2;
    }
    *target = v;
  }
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> w(size_t(vocab * d));
  for (float& x : w) x = 0.02f * normal(rng);
  std::printf("CPU kernels: %s; vocab %lld, d %lld, median of %d\n", eagerlm::cpu::active_isa(), (long long)vocab,
              (long long)d, (int)reps);
  for (const int64_t rows : {int64_t(1), int64_t(64), int64_t(512)}) {
    std::vector<float> h(static_cast<size_t>(rows * d));
    for (float& x : h) x = normal(rng);
    std::vector<int32_t> targets(static_cast<size_t>(rows));
    for (auto& t : targets) t = int32_t(rng() % uint32_t(vocab));
    std::vector<float> out(static_cast<size_t>(rows)), logits(static_cast<size_t>(rows * vocab));
    const Timing fused = median_ms(reps, [&] {
      eagerlm::cpu::target_logprobs(h.data(), d, w.data(), targets.data(), out.data(), rows, d, vocab);
    });
    const Timing unfused = median_ms(reps, [&] {
      eagerlm::cpu::linear_transposed(h.data(), d, w.data(), logits.data(), vocab, rows, d, vocab);
      eagerlm::cpu::softmax(logits.data(), rows, vocab, nullptr);
    });
    const double gflop = 2.0 * double(rows) * double(d) * double(vocab) / 1e9;
    std::printf(
        "rows %4lld: fused %8.2f ms (%6.1f GFLOP/s; CPU %8.2f ms) | logits + softmax %8.2f ms (%6.1f GFLOP/s; CPU "
        "%8.2f ms), logits buffer %.1f MB\n",
        (long long)rows, fused.wall_ms, gflop / fused.wall_ms * 1e3, fused.cpu_ms, unfused.wall_ms,
        gflop / unfused.wall_ms * 1e3, unfused.cpu_ms, double(rows * vocab) * sizeof(float) / 1e6);
  }
  return 0;
}
