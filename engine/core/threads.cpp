#include "engine/core/threads.h"

#include <sched.h>
#include "kernels/common/openmp.h"

#include <thread>

extern "C" void openblas_set_num_threads(int num_threads);

namespace eagerlm {

namespace {
int g_threads = 0;  // 0: not set yet, use hardware_threads()
}

int hardware_threads() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n ? int(n) : 1;
}

int num_threads() { return g_threads > 0 ? g_threads : hardware_threads(); }

void set_num_threads(int n) {
  if (n < 1) n = 1;
  g_threads = n;
  omp_set_num_threads(n);
  // OpenBLAS stays single-threaded: kernels/cpu/linear.cpp splits GEMMs across OpenMP threads,
  // so only one pool of threads ever competes for the cores.
  openblas_set_num_threads(1);
}

}  // namespace eagerlm
