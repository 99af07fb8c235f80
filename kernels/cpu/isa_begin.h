// Opens the instruction-set region of a CPU kernel source; isa_end.h closes it. Included after
// every other include, so that only the kernel's own code is compiled for the variant's ISA:
// standard-library templates and the inline helpers of kernels/common are compiled for the
// baseline and inlined into the variant's code (GCC inlines a baseline function into a wider
// one), and no function with an ISA-specific body can be shared between variants by the linker.
// No include guard: each source opens and closes its region once.
//
// The build defines EAGERLM_CPU_ISA (the variant's namespace: generic, avx2, avx512, avx512bf16
// or native) and, for a dispatched x86-64 variant, EAGERLM_CPU_ISA_<ISA>. Sources with
// hand-written paths test what the region provides (GCC does not define __AVX2__ etc. inside a
// #pragma GCC target region):
//   EAGERLM_CPU_HAS_AVX2        AVX2, FMA and F16C
//   EAGERLM_CPU_HAS_AVX512      AVX-512 F/BW/CD/DQ/VL (implies EAGERLM_CPU_HAS_AVX2)
//   EAGERLM_CPU_HAS_AVX512BF16  AVX512_BF16 (vdpbf16ps, vcvtne2ps2bf16), with VNNI and VBMI
#if !defined(EAGERLM_CPU_ISA)
#error "kernels/cpu sources are compiled once per ISA variant; kernels/CMakeLists.txt defines EAGERLM_CPU_ISA"
#endif

#if defined(EAGERLM_CPU_ISA_AVX2) || defined(EAGERLM_CPU_ISA_AVX512) || defined(EAGERLM_CPU_ISA_AVX512BF16)
#if !defined(__GNUC__) || defined(__clang__)
#error "dispatched CPU variants need GCC's #pragma GCC target (other compilers build the generic variant)"
#endif
#pragma GCC push_options
#if defined(EAGERLM_CPU_ISA_AVX512BF16)
#pragma GCC target( \
    "avx,avx2,fma,f16c,bmi,bmi2,lzcnt,movbe,popcnt,avx512f,avx512bw,avx512cd,avx512dq,avx512vl,avx512bf16,avx512vnni,avx512vbmi")
#define EAGERLM_CPU_HAS_AVX512BF16 1
#define EAGERLM_CPU_HAS_AVX512 1
#elif defined(EAGERLM_CPU_ISA_AVX512)
#pragma GCC target("avx,avx2,fma,f16c,bmi,bmi2,lzcnt,movbe,popcnt,avx512f,avx512bw,avx512cd,avx512dq,avx512vl")
#define EAGERLM_CPU_HAS_AVX512 1
#else
#pragma GCC target("avx,avx2,fma,f16c,bmi,bmi2,lzcnt,movbe,popcnt")
#endif
#define EAGERLM_CPU_HAS_AVX2 1
#else
// The native (or generic) variant: whatever the compiler was told (-march=native, -mavx512f...).
#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define EAGERLM_CPU_HAS_AVX2 1
#endif
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
#define EAGERLM_CPU_HAS_AVX512 1
#if defined(__AVX512BF16__)
#define EAGERLM_CPU_HAS_AVX512BF16 1
#endif
#endif
#endif
