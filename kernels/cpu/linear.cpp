// linear and linear_transposed: float32 weights, which are the typed kernels with WeightType::kF32
// (linear_typed.cpp, linear_transposed_typed.cpp), so float32 and narrower weights share one
// batch-invariant arithmetic and one set of tiles.
#include "kernels/cpu/cpu_ops.h"

#include "kernels/cpu/isa_begin.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

void linear(const float* x, int64_t ldx, const float* w, const float* bias, float* y, int64_t ldy, int64_t m, int64_t k,
            int64_t n) {
  linear_typed(x, ldx, Weights{WeightType::kF32, w, nullptr}, bias, y, ldy, m, k, n, GemmMath::kFp32);
}

void linear_transposed(const float* x, int64_t ldx, const float* w, float* y, int64_t ldy, int64_t m, int64_t k,
                       int64_t n) {
  linear_transposed_typed(x, ldx, Weights{WeightType::kF32, w, nullptr}, y, ldy, m, k, n, GemmMath::kFp32);
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
