// The prefill GEMM for bf16 weights under GemmMath::kBf16 (bf16_gemm.cpp), on AVX512_BF16 dot
// products: only in variants that have them (EAGERLM_CPU_HAS_AVX512BF16). Declared inside the
// variant's namespace: include after isa_begin.h.
#pragma once

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

#if defined(EAGERLM_CPU_HAS_AVX512BF16)
// Columns [n0, n1) of y[m, n] = bf16(x[m, k])·W (+ bias), float32 accumulation. W is bf16:
// input-major [k, n] (linear), or output-major [n, k] (linear_transposed; bias null). x is
// rounded to bf16 (nearest even), the products of two bf16 are exact in float32, the sums round.
void gemm_bf16(const float* x, int64_t ldx, const uint16_t* w, bool input_major, const float* bias, float* y,
               int64_t ldy, int64_t m, int64_t k, int64_t n, int64_t n0, int64_t n1);
#endif

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA
