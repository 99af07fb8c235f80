// The library-wide settings of the C++ API: CPU threads and the version.
#include "kernels/common/openmp.h"

#include <atomic>
#include <string>

#include "api/library_internal.h"
#include "eagerlm/common.hpp"
#include "eagerlm/version.h"

namespace eagerlm {

namespace {
std::atomic<int> g_cpu_threads{0};  // 0: OpenMP's default
}

void set_cpu_threads(int n) {
  if (n < 0) throw Error(ErrorCode::kInvalidArgument, "set_cpu_threads: expected n >= 0, got " + std::to_string(n));
  g_cpu_threads.store(n);
}

int cpu_threads() { return g_cpu_threads.load(); }

const char* version() { return EAGERLM_VERSION_STRING; }

namespace library {

void apply_cpu_threads() {
  // The thread's own default, read before this function ever changes it.
  thread_local const int initial = omp_get_max_threads();
  thread_local int applied = 0;
  const int wanted = g_cpu_threads.load();
  if (wanted == applied) return;
  omp_set_num_threads(wanted > 0 ? wanted : initial);
  applied = wanted;
}

}  // namespace library
}  // namespace eagerlm
