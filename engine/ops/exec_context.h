// Where ops run: the device, and for CUDA the stream, cuBLAS handle and workspace (owned by an
// opaque CudaContext defined in kernels/cuda/). Passed explicitly to every op; no globals.
#pragma once

#include <memory>

#include "engine/core/device.h"

namespace eagerlm {

namespace cuda {
struct CudaContext;  // defined in kernels/cuda/cuda_context.h
}

class ExecContext {
 public:
  explicit ExecContext(Device device = Device::kCpu);
  ~ExecContext();
  ExecContext(ExecContext&&) noexcept;
  ExecContext& operator=(ExecContext&&) noexcept;

  Device device() const { return device_; }
  cuda::CudaContext* cuda() const { return cuda_.get(); }
  // Waits for queued work (a no-op on the CPU).
  void synchronize() const;

 private:
  struct CudaDeleter {
    void operator()(cuda::CudaContext* c) const noexcept;
  };
  Device device_;
  std::unique_ptr<cuda::CudaContext, CudaDeleter> cuda_;
};

}  // namespace eagerlm
