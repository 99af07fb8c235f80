// The kernel table of the variant this file is compiled for (see isa_begin.h).
#include "kernels/cpu/kernel_table.h"

#define EAGERLM_CPU_STRING_(x) #x
#define EAGERLM_CPU_STRING(x) EAGERLM_CPU_STRING_(x)
#define EAGERLM_CPU_TABLE_(isa) kernels_##isa
#define EAGERLM_CPU_TABLE(isa) EAGERLM_CPU_TABLE_(isa)

// What the variant's region provides (isa_begin.h), read once for the table.
#include "kernels/cpu/isa_begin.h"
namespace {
#if defined(EAGERLM_CPU_HAS_AVX512BF16)
constexpr bool kHasBf16Gemm = true;
#else
constexpr bool kHasBf16Gemm = false;
#endif
#if defined(EAGERLM_CPU_HAS_AVX512)
constexpr bool kHasAvx512 = true;
#else
constexpr bool kHasAvx512 = false;
#endif
#if defined(EAGERLM_CPU_HAS_AVX2)
constexpr bool kHasAvx2 = true;
#else
constexpr bool kHasAvx2 = false;
#endif
}  // namespace
#include "kernels/cpu/isa_end.h"

namespace eagerlm::cpu {

namespace EAGERLM_CPU_ISA {
#include "kernels/cpu/cpu_kernels.inc"
}  // namespace EAGERLM_CPU_ISA

extern const KernelTable EAGERLM_CPU_TABLE(EAGERLM_CPU_ISA);
const KernelTable EAGERLM_CPU_TABLE(EAGERLM_CPU_ISA) = {
    EAGERLM_CPU_STRING(EAGERLM_CPU_ISA),
    kHasBf16Gemm,
    kHasAvx512,
    kHasAvx2,
    &EAGERLM_CPU_ISA::linear,
    &EAGERLM_CPU_ISA::linear_transposed,
    &EAGERLM_CPU_ISA::linear_typed,
    &EAGERLM_CPU_ISA::linear_transposed_typed,
    &EAGERLM_CPU_ISA::linear_paired,
    &EAGERLM_CPU_ISA::linear_int8_panels,
    &EAGERLM_CPU_ISA::linear_row_panels,
    &EAGERLM_CPU_ISA::gather_rows_typed,
    &EAGERLM_CPU_ISA::widen_weights,
    &EAGERLM_CPU_ISA::quantize_int8,
    &EAGERLM_CPU_ISA::target_logprobs,
    &EAGERLM_CPU_ISA::layer_norm,
    &EAGERLM_CPU_ISA::gelu,
    &EAGERLM_CPU_ISA::add,
    &EAGERLM_CPU_ISA::embedding,
    &EAGERLM_CPU_ISA::softmax,
    &EAGERLM_CPU_ISA::kv_append,
    &EAGERLM_CPU_ISA::kv_copy,
    &EAGERLM_CPU_ISA::attention,
    &EAGERLM_CPU_ISA::convert_to_f32,
    &EAGERLM_CPU_ISA::convert_from_f32,
    &EAGERLM_CPU_ISA::fill_normal_f32,
    &EAGERLM_CPU_ISA::fill_normal,
    &EAGERLM_CPU_ISA::fill_constant,
    &EAGERLM_CPU_ISA::fill_random_bits32,
    &EAGERLM_CPU_ISA::fill_uniform_f32,
    &EAGERLM_CPU_ISA::fill_erfinv_scaled_f32,
    &EAGERLM_CPU_ISA::erf_inv_f32,
    &EAGERLM_CPU_ISA::fma_f32,
    &EAGERLM_CPU_ISA::read_sum,
    &EAGERLM_CPU_ISA::fma_flops,
    &EAGERLM_CPU_ISA::bf16_flops,
};

}  // namespace eagerlm::cpu
