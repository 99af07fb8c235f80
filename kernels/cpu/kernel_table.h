// One CPU variant's kernels as a table of function pointers (one table per variant, filled by
// variant_table.cpp; dispatch.cpp picks one).
#pragma once

#include "kernels/cpu/cpu_ops.h"

namespace eagerlm::cpu {

struct KernelTable {
  const char* isa;
  bool has_bf16_gemm;  // linear_typed has a bf16 GEMM for GemmMath::kBf16 (AVX512_BF16)
  bool has_avx512;     // 512-bit vectors (the int8 panels' register tiles are measured on them)
  bool has_avx2;       // 256-bit vectors with FMA at least (the f32 panels' tiles are measured on them)
  decltype(&cpu::linear) linear;
  decltype(&cpu::linear_transposed) linear_transposed;
  decltype(&cpu::linear_typed) linear_typed;
  decltype(&cpu::linear_transposed_typed) linear_transposed_typed;
  decltype(&cpu::linear_paired) linear_paired;
  decltype(&cpu::linear_int8_panels) linear_int8_panels;
  decltype(&cpu::linear_row_panels) linear_row_panels;
  decltype(&cpu::gather_rows_typed) gather_rows_typed;
  decltype(&cpu::widen_weights) widen_weights;
  decltype(&cpu::quantize_int8) quantize_int8;
  decltype(&cpu::target_logprobs) target_logprobs;
  decltype(&cpu::layer_norm) layer_norm;
  decltype(&cpu::gelu) gelu;
  decltype(&cpu::add) add;
  decltype(&cpu::embedding) embedding;
  decltype(&cpu::softmax) softmax;
  decltype(&cpu::kv_append) kv_append;
  decltype(&cpu::kv_copy) kv_copy;
  decltype(&cpu::attention) attention;
  decltype(&cpu::convert_to_f32) convert_to_f32;
  decltype(&cpu::convert_from_f32) convert_from_f32;
  decltype(&cpu::fill_normal_f32) fill_normal_f32;
  decltype(&cpu::fill_normal) fill_normal;
  decltype(&cpu::fill_constant) fill_constant;
  decltype(&cpu::fill_random_bits32) fill_random_bits32;
  decltype(&cpu::fill_uniform_f32) fill_uniform_f32;
  decltype(&cpu::fill_erfinv_scaled_f32) fill_erfinv_scaled_f32;
  decltype(&cpu::erf_inv_f32) erf_inv_f32;
  decltype(&cpu::fma_f32) fma_f32;
  decltype(&cpu::read_sum) read_sum;
  decltype(&cpu::fma_flops) fma_flops;
  decltype(&cpu::bf16_flops) bf16_flops;
};

}  // namespace eagerlm::cpu
