// widen_weights: a whole typed weight matrix widened to float32 (the int8 dequantization, and
// bf16/f16 widening, of a model converted at load or by `eagerlm quantize`), row ranges split
// over the OpenMP threads. The values are those the product kernels compute with (widen.h: an
// int8 weight is float(q)·s, rounded once).
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>

#include "kernels/common/dtype.h"
#include "kernels/common/weights.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/parallel.h"

#include "kernels/cpu/isa_begin.h"

#include "kernels/cpu/widen.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

namespace {
// Below this many elements one thread does it: an OpenMP region costs ~0.3 µs even when inactive.
constexpr int64_t kParallelElements = 1 << 18;

// Rows [r0, r1) of the matrix: for an input-major int8 matrix r0 is a multiple of kInt8Block.
void widen_range(const Weights& w, int64_t rows, int64_t cols, bool input_major, int64_t r0, int64_t r1,
                 float* out) {
  (void)rows;
  if (!input_major) {
    widen_rows(w, cols, r0, nullptr, r1 - r0, out + r0 * cols);
    return;
  }
  // Input-major: the rows are inputs; a row range is a smaller [r1 - r0, cols] matrix.
  Weights part = w;
  part.data = static_cast<const char*>(w.data) + size_t(r0 * cols) * weight_element_size(w.type);
  if (w.type == WeightType::kInt8) part.scales = w.scales + (r0 / kInt8Block) * cols;
  widen_columns(part, r1 - r0, cols, 0, cols, out + r0 * cols);
}
}  // namespace

void widen_weights(const Weights& w, int64_t rows, int64_t cols, bool input_major, float* out) {
  if (rows <= 0 || cols <= 0) return;
  if (rows * cols <= kParallelElements) {
    widen_range(w, rows, cols, input_major, 0, rows, out);
    return;
  }
  // Input-major int8 splits at whole blocks of rows (a block shares its scales).
  const int64_t unit = input_major && w.type == WeightType::kInt8 ? kInt8Block : 1;
  parallel_ranges(rows, [&](int64_t r0, int64_t r1) { widen_range(w, rows, cols, input_major, r0, r1, out); }, unit);
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
