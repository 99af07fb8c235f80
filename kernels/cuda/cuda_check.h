// Checking of CUDA runtime and cuBLAS calls: a failing call becomes an eagerlm::Error naming the
// call, the file and the line (kOutOfMemory for allocation failures, kInternal otherwise), so a
// CUDA failure is reported like any other eagerlm error instead of being silently ignored.
// Internal to kernels/cuda/: includes the CUDA headers, which must not leak into the engine.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace eagerlm::cuda {

// Throws for a failed runtime call. Clears the runtime's (non-sticky) last-error state first, so
// a later check_launch() does not report this same, already thrown, failure again.
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);
// Throws for a failed cuBLAS call (defined with the cuBLAS-using code, in cuda_context.cu).
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);

inline void check_cuda(cudaError_t err, const char* call, const char* file, int line) {
  if (err != cudaSuccess) throw_cuda_error(err, call, file, line);
}
inline void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) throw_cublas_error(status, call, file, line);
}

// Call right after a kernel launch: reports a launch failure (bad configuration, too much shared
// memory, no device code for this GPU, ...) naming the op. Errors raised while the kernel runs
// surface later, at synchronize().
void check_launch(const char* op);

}  // namespace eagerlm::cuda

#define EAGERLM_CUDA_CHECK(call) ::eagerlm::cuda::check_cuda((call), #call, __FILE__, __LINE__)
#define EAGERLM_CUBLAS_CHECK(call) ::eagerlm::cuda::check_cublas((call), #call, __FILE__, __LINE__)
