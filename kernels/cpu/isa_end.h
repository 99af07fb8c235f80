// Closes the instruction-set region opened by isa_begin.h.
#if defined(EAGERLM_CPU_ISA_AVX2) || defined(EAGERLM_CPU_ISA_AVX512) || defined(EAGERLM_CPU_ISA_AVX512BF16)
#pragma GCC pop_options
#endif
#undef EAGERLM_CPU_HAS_AVX2
#undef EAGERLM_CPU_HAS_AVX512
#undef EAGERLM_CPU_HAS_AVX512BF16
