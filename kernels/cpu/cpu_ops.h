// CPU kernels: float32, row-major, raw pointers. Each op lives in kernels/cpu/<op>.cpp, has a CUDA
// twin in kernels/cuda/<op>.cu and a double-precision reference in test/reference/. Kernels
// trust their arguments; the engine validates shapes before calling them. Parallel loops use
// OpenMP with the thread count set by engine/core/threads.h.
//
// Every kernel source is compiled once per instruction-set variant (kernels/CMakeLists.txt):
// generic (any x86-64, or the compiler's default elsewhere), avx2 (AVX2 + FMA + F16C), avx512
// (AVX-512 F/BW/CD/DQ/VL) and avx512bf16 (plus AVX512_BF16, VNNI, VBMI), each into its own
// namespace eagerlm::cpu::<isa>. The functions declared here are the entry points: the first
// call picks the best variant this CPU runs (EAGERLM_CPU_ISA=<isa> in the environment asks for
// another one it supports), and each call goes to that variant. A build with EAGERLM_NATIVE=ON has one variant,
// "native".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/dtype.h"
#include "kernels/common/gemm_math.h"
#include "kernels/common/kv_layout.h"
#include "kernels/common/random/threefry.h"
#include "kernels/common/weights.h"

namespace eagerlm::cpu {

// Keys are visited in blocks of this many positions by attention (and its CUDA twin's tiles).
constexpr int kAttentionBlock = 64;

// target_logprobs visits the vocabulary in blocks of this many ids (its tests' error bounds
// depend on it: each block's sum of exponentials has at most this many terms).
constexpr int64_t kTargetLogprobBlock = 512;

#include "kernels/cpu/cpu_kernels.inc"

// ---- Variants.
// The variants this CPU can run, best first (those built into this library that the CPU has).
std::vector<std::string> supported_isas();
// The variant the entry points call now.
const char* active_isa();
// Whether the active variant has a bf16 GEMM for GemmMath::kBf16 (its AVX512_BF16 dot products or
// AMX tiles); without one kBf16 would be fp32 under another name.
bool has_bf16_gemm();
// Whether the active variant computes with 512-bit vectors (avx512, avx512bf16).
bool has_avx512_vectors();
// Whether the active variant computes with 256-bit FMA vectors or wider (avx2, avx512, avx512bf16).
bool has_avx2_vectors();
// Why EAGERLM_CPU_ISA was not followed ("" when it was, or is unset).
const std::string& isa_request_problem();

// Makes the entry points call variant `isa` (one of supported_isas()) while it lives, for tests
// and benchmarks that compare variants. Not thread-safe: no kernel may run meanwhile.
class ScopedIsa {
 public:
  explicit ScopedIsa(const std::string& isa);  // throws std::invalid_argument if unsupported
  ~ScopedIsa();
  ScopedIsa(const ScopedIsa&) = delete;
  ScopedIsa& operator=(const ScopedIsa&) = delete;

 private:
  const void* previous_;
};

// ---- AMX.
// GemmMath::kBf16's prefill GEMM (the avx512bf16 variant's, bf16 weights) runs on AMX tiles
// (TDPBF16PS, Sapphire Rapids and later) where the CPU has them and the OS grants the process
// their state, asked once here; elsewhere on AVX512_BF16 dot products. Both compute the same
// products of bf16 pairs with float32 sums, in different orders. EAGERLM_CPU_AMX=0 turns the
// tiles off.
bool amx_available();  // the CPU has AMX-BF16 and the OS lets this process use the tiles
bool amx_enabled();    // the GEMM uses them now
// Turns the tiles on (where available) or off while it lives, for tests and benchmarks that
// compare the two. Not thread-safe: no kernel may run meanwhile.
class ScopedAmx {
 public:
  explicit ScopedAmx(bool on);
  ~ScopedAmx();
  ScopedAmx(const ScopedAmx&) = delete;
  ScopedAmx& operator=(const ScopedAmx&) = delete;

 private:
  bool previous_;
};

}  // namespace eagerlm::cpu
