// OpenMP's runtime calls, or their one-thread meaning in a build without OpenMP
// (EAGERLM_OPENMP=OFF: the ThreadSanitizer build, since libgomp is not instrumented and would
// drown real reports in false ones). The `#pragma omp` loops then simply run serially.
#pragma once

#if defined(_OPENMP)
#include <omp.h>
#else
inline int omp_get_max_threads() { return 1; }
inline int omp_get_num_threads() { return 1; }
inline int omp_get_thread_num() { return 0; }
inline int omp_in_parallel() { return 0; }
inline void omp_set_num_threads(int) {}
#endif
