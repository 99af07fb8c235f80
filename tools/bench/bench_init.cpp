// eagerlm-bench-init: how fast gpt2::initialize fills memory, next to memset on a buffer of the
// same size measured in the same run.
//
//   eagerlm-bench-init [--runs N] [--threads N] [PRESET...]     (default: gpt2 gpt2-xl, 5 runs)
//
// For each preset, the median over runs of:
//   memset fresh  parallel memset of newly allocated memory (first touch: page faults included),
//                 with the same huge-page advice the initializer gives its block;
//   memset warm   parallel memset of memory already touched;
//   init          gpt2::initialize as a user calls it (allocation, first touch, generation);
//   fill warm     the normal generator alone (fill_normal_f32) into memory already touched.
// Ratios init / memset fresh and fill warm / memset warm compare like with like.
#include <sys/mman.h>

#include "kernels/common/openmp.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/core/device.h"
#include "engine/core/error.h"
#include "engine/core/threads.h"
#include "kernels/cpu/cpu_ops.h"
#include "models/gpt2/config.h"
#include "models/gpt2/initializer.h"
#include "models/gpt2/parameters.h"

using namespace eagerlm;

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

void advise_huge_pages(void* data, size_t bytes) {
#ifdef MADV_HUGEPAGE
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + 4095) & ~uintptr_t(4095);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~uintptr_t(4095);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

// memset split across the OpenMP threads, one contiguous range each (as the fill loops do).
void parallel_memset(unsigned char* p, int value, size_t bytes) {
#pragma omp parallel
  {
    const size_t t = size_t(omp_get_thread_num()), nt = size_t(omp_get_num_threads());
    const size_t begin = bytes * t / nt, end = bytes * (t + 1) / nt;
    std::memset(p + begin, value, end - begin);
  }
}

struct Result {
  double memset_fresh, memset_warm, init, fill_warm;  // seconds (medians)
};

Result measure(const gpt2::Config& config, int runs) {
  const size_t bytes = gpt2::total_parameter_bytes(gpt2::parameter_specs(config), DType::kF32);
  std::vector<double> memset_fresh, memset_warm, init, fill_warm;
  {
    auto* warm = static_cast<unsigned char*>(device_alloc(Device::kCpu, bytes));
    advise_huge_pages(warm, bytes);
    parallel_memset(warm, 0, bytes);  // touch once
    for (int r = 0; r < runs; ++r) {
      auto* fresh = static_cast<unsigned char*>(device_alloc(Device::kCpu, bytes));
      double t = now_seconds();
      advise_huge_pages(fresh, bytes);
      parallel_memset(fresh, r + 1, bytes);
      memset_fresh.push_back(now_seconds() - t);
      device_free(Device::kCpu, fresh);

      t = now_seconds();
      parallel_memset(warm, r + 1, bytes);
      memset_warm.push_back(now_seconds() - t);

      t = now_seconds();
      cpu::fill_normal_f32(rng::key_from_seed(uint64_t(r)), 0.02f, reinterpret_cast<float*>(warm), int64_t(bytes / 4));
      fill_warm.push_back(now_seconds() - t);
    }
    device_free(Device::kCpu, warm);
  }
  for (int r = 0; r < runs; ++r) {
    gpt2::InitOptions options;
    options.seed = uint64_t(r);
    const double t = now_seconds();
    const gpt2::ParameterTensors params = gpt2::initialize(config, options);
    init.push_back(now_seconds() - t);
  }
  return {median(memset_fresh), median(memset_warm), median(init), median(fill_warm)};
}

[[noreturn]] void usage(const char* message) {
  std::fprintf(stderr, "eagerlm-bench-init: %s\nusage: eagerlm-bench-init [--runs N] [--threads N] [PRESET...]\n",
               message);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5, threads = 0;
  std::vector<std::string> presets;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--runs" || arg == "--threads") && i + 1 < argc) {
      const int value = std::atoi(argv[++i]);
      if (value < 1) usage((arg + " needs a positive integer").c_str());
      (arg == "--runs" ? runs : threads) = value;
    } else if (arg.rfind("--", 0) == 0) {
      usage(("unknown option " + arg).c_str());
    } else {
      presets.push_back(arg);
    }
  }
  if (presets.empty()) presets = {"gpt2", "gpt2-xl"};
  set_num_threads(threads > 0 ? threads : hardware_threads());

  try {
    std::printf("threads: %d, runs: %d (medians)\n", num_threads(), runs);
    std::printf("%-12s %9s %14s %13s %9s %11s %13s %13s\n", "preset", "GB", "memset fresh", "memset warm", "init",
                "fill warm", "init/fresh", "fill/warm");
    for (const std::string& name : presets) {
      const gpt2::Config config = gpt2::preset(name);
      const double gb = double(gpt2::total_parameter_bytes(gpt2::parameter_specs(config), DType::kF32)) / 1e9;
      const Result r = measure(config, runs);
      std::printf("%-12s %9.3f %9.2f GB/s %8.2f GB/s %4.2f GB/s %6.2f GB/s %12.0f%% %12.0f%%\n", name.c_str(), gb,
                  gb / r.memset_fresh, gb / r.memset_warm, gb / r.init, gb / r.fill_warm, 100 * r.memset_fresh / r.init,
                  100 * r.memset_warm / r.fill_warm);
      std::fflush(stdout);
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "eagerlm-bench-init: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
