// add: elementwise sum, used for the residual connections (y usually aliases a).
#include <algorithm>

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/parallel.h"

#include "kernels/cpu/isa_begin.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

namespace {

// Below this many elements the memory-bound loop runs on the calling thread: even an inactive
// OpenMP region costs ~0.3 µs, a lot for a decode step's single row.
constexpr int64_t kParallelElements = 65536;
constexpr int64_t kChunk = 16384;  // elements per parallel work unit

void add_range(const float* a, const float* b, float* y, int64_t begin, int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) y[i] = a[i] + b[i];
}

}  // namespace

void add(const float* a, const float* b, float* y, int64_t n) {
  if (n <= kParallelElements) {
    add_range(a, b, y, 0, n);
    return;
  }
  parallel_ranges(n, [&](int64_t i0, int64_t i1) { add_range(a, b, y, i0, i1); }, kChunk);
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
