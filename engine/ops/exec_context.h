// Where ops run: the device, and for CUDA the stream, cuBLAS handle and workspace (owned by an
// opaque CudaContext defined in kernels/cuda/). Passed explicitly to every op; no globals.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "engine/core/device.h"
#include "kernels/cuda/cuda_ops.h"  // GemmMath (plain C++, no CUDA headers)

namespace eagerlm {

using cuda::GemmMath;
const char* gemm_math_name(GemmMath math);  // "fp32", "tf32", "bf16"
std::optional<GemmMath> gemm_math_from_name(std::string_view name);

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
  // Tensor-core math for the GEMMs; anything but kFp32 needs CUDA (throws kUnsupported).
  void set_gemm_math(GemmMath math);
  GemmMath gemm_math() const { return gemm_math_; }

 private:
  struct CudaDeleter {
    void operator()(cuda::CudaContext* c) const noexcept;
  };
  Device device_;
  GemmMath gemm_math_ = GemmMath::kFp32;
  std::unique_ptr<cuda::CudaContext, CudaDeleter> cuda_;
};

}  // namespace eagerlm
