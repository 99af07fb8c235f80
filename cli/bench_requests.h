// `eagerlm bench --requests N --parallel LIST`: continuous batching under a stream of requests.
// N requests with mixed prompt lengths and token budgets arrive over time (a fixed, seeded
// schedule); for each number of cache slots in LIST the same schedule runs through the engine
// (AsyncEngine, as the server drives it), and the benchmark reports generated tokens per second,
// first-token and inter-token latencies, and how long a request arriving mid-run waited for its
// first token beyond its own prefill, in decode steps.
#pragma once

#include <cstdint>
#include <vector>

#include "cli/model_source.h"

namespace eagerlm::cli {

struct RequestBenchOptions {
  int requests = 64;
  std::vector<int> parallel = {1, 4, 8, 16};
  int min_prompt = 16, max_prompt = 512;
  int min_budget = 16, max_budget = 256;
  double arrival_seconds = -1;  // spread of the arrivals, 0-86400 s; -1 (unset): a sixteenth of the 1-slot decode
  uint64_t seed = 1;
  int64_t prefill_chunk = 0;  // prompt tokens a step carries beside decode rows; 0: the device's choice
};

int run_request_bench(const ModelFlags& source, const RequestBenchOptions& options, int threads, bool json);

}  // namespace eagerlm::cli
