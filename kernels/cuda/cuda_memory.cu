// The CUDA runtime calls of cuda_memory.h: device discovery, allocation, copies.
// Copies and memsets run on the legacy default stream. The op streams (cuda_context.cu) are
// created blocking, so these calls are ordered after every kernel queued before them and before
// every kernel queued after them; a device-to-host copy therefore sees finished results.
#include <cuda_runtime.h>

#include <string>

#include "kernels/common/kernel_error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_memory.h"

namespace eagerlm::cuda {

namespace {

struct Discovery {
  int count = 0;
  std::string reason;
};

// Asked once per process: cudaGetDeviceCount fails (rather than returning 0) when there is no
// driver or no device, and that must read as "no CUDA", never as an error.
const Discovery& discovery() noexcept {
  static const Discovery d = [] {
    Discovery r;
    try {
      int n = 0;
      const cudaError_t err = cudaGetDeviceCount(&n);
      if (err != cudaSuccess) {
        (void)cudaGetLastError();
        r.count = 0;
        r.reason = std::string("no usable CUDA device or driver found (cudaGetDeviceCount: ") + cudaGetErrorName(err) +
                   ": " + cudaGetErrorString(err) + ")";
      } else if (n <= 0) {
        r.count = 0;
        r.reason = "no CUDA device found (cudaGetDeviceCount returned 0)";
      } else {
        r.count = n;
        r.reason = "CUDA is available";
      }
    } catch (...) {  // std::string allocation; keeps discovery noexcept
      r.count = 0;
    }
    return r;
  }();
  return d;
}

cudaMemcpyKind copy_kind(bool dst_on_device, bool src_on_device) {
  if (dst_on_device) return src_on_device ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
  return src_on_device ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost;
}

}  // namespace

int device_count() noexcept { return discovery().count; }

const char* unavailable_reason() noexcept {
  const Discovery& d = discovery();
  return d.reason.empty() ? "no usable CUDA device found" : d.reason.c_str();
}

void* malloc_bytes(size_t bytes) {
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, bytes == 0 ? 1 : bytes);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    const KernelFault code = err == cudaErrorMemoryAllocation ? KernelFault::kOutOfMemory : KernelFault::kInternal;
    kernel_fail(code, "could not allocate " + std::to_string(bytes) +
                          " bytes of CUDA memory: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
  }
  return p;
}

void free_bytes(void* p) noexcept {
  if (!p) return;
  if (cudaFree(p) != cudaSuccess) (void)cudaGetLastError();  // nothing sensible to do in a free
}

void copy_bytes(void* dst, bool dst_on_device, const void* src, bool src_on_device, size_t bytes) {
  if (bytes == 0) return;
  EAGERLM_CUDA_CHECK(cudaMemcpy(dst, src, bytes, copy_kind(dst_on_device, src_on_device)));
}

void zero_bytes(void* p, size_t bytes) {
  if (bytes == 0) return;
  EAGERLM_CUDA_CHECK(cudaMemset(p, 0, bytes));
}

uint64_t free_memory_bytes() {
  size_t free = 0, total = 0;
  EAGERLM_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return uint64_t(free);
}

}  // namespace eagerlm::cuda
