// gather_rows_typed: rows of an output-major typed W widened to float32 (the token embedding
// lookup from a typed wte), split over the OpenMP threads when there is enough of it.
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernels/common/dtype.h"
#include "kernels/common/weights.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/parallel.h"

#include "kernels/cpu/isa_begin.h"

#include "kernels/cpu/widen.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

namespace {
// Below this many elements one thread does it: an OpenMP region costs ~0.3 µs even when inactive.
constexpr int64_t kParallelElements = 65536;
}  // namespace

void gather_rows_typed(const Weights& w, int64_t k, const int32_t* rows, int64_t n_rows, float* out) {
  if (n_rows <= 0 || k <= 0) return;
  if (n_rows * k <= kParallelElements) {
    widen_rows(w, k, 0, rows, n_rows, out);
    return;
  }
  parallel_ranges(n_rows, [&](int64_t r0, int64_t r1) { widen_rows(w, k, 0, rows + r0, r1 - r0, out + r0 * k); });
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
