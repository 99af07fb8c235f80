// The eagerlm command makes idle OpenMP threads sleep instead of spin (OMP_WAIT_POLICY=passive)
// unless the environment already says otherwise.
//
// Why: a decode step meets at an OpenMP barrier ~120 times. With libgomp's default spinning, a
// thread that finishes first burns its core while the thread it waits for may be descheduled,
// so on a machine whose cores are shared (CI runners, a compiler running beside us) every
// barrier can cost a scheduler time slice. Measured with two busy processes on the 2 cores:
// 107-290 ms per GPT-2 token spinning, 23-48 ms passive; quiet, passive costs 5-15 %
// (interleaved `eagerlm bench` runs). OMP_WAIT_POLICY=active restores spinning.
//
// How: libgomp reads its environment once, in its library constructor, before main() runs, and
// glibc initializes libc (resetting environ) before any other constructor, so the variable cannot
// be set from inside this process in time. When it is unset, the process sets it and executes
// itself again (/proc/self/exe, same arguments, same pid): ~5 ms here, mostly loading the
// shared libraries again. If that fails, it carries on with the default policy.
#include "cli/openmp_wait_policy.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>

namespace eagerlm::cli {

void prefer_passive_openmp_waiting(int argc, char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;  // the user's choice, or already re-run
  // Only the commands with parallel loops pay for the second start (~20 ms here: every shared
  // library, OpenBLAS's thread pool included, loads and initializes twice).
  static const char* const kParallel[] = {"generate", "bench", "init", "serve"};
  const bool parallel = argc > 1 && std::any_of(std::begin(kParallel), std::end(kParallel),
                                                [&](const char* c) { return std::strcmp(argv[1], c) == 0; });
  if (!parallel) return;
  if (setenv("OMP_WAIT_POLICY", "passive", 0) != 0) return;
  execv("/proc/self/exe", argv);
  // Still here: exec failed (no /proc?); run on with libgomp's default.
}

}  // namespace eagerlm::cli
