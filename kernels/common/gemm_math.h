// The arithmetic of a backend's matrix products. kFp32 (the default, and all the CPU offers) is
// plain FP32. kTf32 and kBf16 let CUDA run FP32 data through tensor cores with inputs rounded to
// TF32 (10-bit mantissa) or BF16 (7-bit mantissa), accumulating in FP32: faster for prefill and
// large batches, at ~1e-3 / ~1e-2 relative error.
#pragma once

namespace eagerlm {

enum class GemmMath { kFp32, kTf32, kBf16 };

constexpr const char* gemm_math_name(GemmMath math) {  // as the CLI spells it
  return math == GemmMath::kFp32 ? "fp32" : math == GemmMath::kTf32 ? "tf32" : "bf16";
}

}  // namespace eagerlm
