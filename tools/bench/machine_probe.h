// Measures the machine a benchmark runs on, in the same run as the benchmark: memory read
// bandwidth (the floor for decode, which streams every weight once per token) and FP32 peak
// (register-resident FMAs on every thread: the ceiling for prefill GEMMs).
#pragma once

#include <string>

namespace eagerlm::bench {

struct MachineInfo {
  std::string cpu;        // model name from /proc/cpuinfo
  int threads = 0;        // threads used
  double read_gbps = 0;         // GB/s (1e9 bytes/s), best of 9 passes over 1 GiB
  double read_gbps_median = 0;  // the median pass (on a shared VM the two differ widely)
  double fp32_gflops = 0; // GFLOP/s, FMAs counted as 2 FLOPs
};

std::string cpu_model_name();
struct ReadBandwidth {
  double best_gbps = 0, median_gbps = 0;
};
ReadBandwidth measure_read_bandwidth(int threads);
double measure_fp32_peak_gflops(int threads);
MachineInfo probe_machine(int threads);

}  // namespace eagerlm::bench
