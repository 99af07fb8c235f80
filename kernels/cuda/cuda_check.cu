// CUDA runtime error reporting (see cuda_check.h). Lives in eagerlm_cuda_runtime, which the
// engine core links, so it needs nothing but the CUDA runtime.
#include "kernels/cuda/cuda_check.h"

#include <string>

#include "kernels/common/kernel_error.h"

namespace eagerlm::cuda {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  (void)cudaGetLastError();  // reset the non-sticky error state; sticky errors stay anyway
  const KernelFault code = err == cudaErrorMemoryAllocation ? KernelFault::kOutOfMemory : KernelFault::kInternal;
  kernel_fail(code, std::string("CUDA call ") + call + " failed at " + file + ":" + std::to_string(line) + ": " +
                        cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

void check_launch(const char* op) {
  const cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return;
  const KernelFault code = err == cudaErrorMemoryAllocation ? KernelFault::kOutOfMemory : KernelFault::kInternal;
  kernel_fail(code, std::string("CUDA kernel launch failed in op ") + op + ": " + cudaGetErrorName(err) + " (" +
                        cudaGetErrorString(err) + ")");
}

}  // namespace eagerlm::cuda
