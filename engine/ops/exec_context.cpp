#include "engine/ops/exec_context.h"

#include <string>

#include "engine/core/error.h"
#include "kernels/cuda/cuda_ops.h"

namespace eagerlm {

ExecContext::ExecContext(Device device) : device_(device) {
  if (device == Device::kCuda) {
    if (!cuda_available())
      throw_error(ErrorCode::kUnsupported,
                  std::string("--device cuda requested but ") + cuda_unavailable_reason());
    cuda_.reset(cuda::create_context());
  }
}

ExecContext::~ExecContext() = default;
ExecContext::ExecContext(ExecContext&&) noexcept = default;
ExecContext& ExecContext::operator=(ExecContext&&) noexcept = default;

void ExecContext::CudaDeleter::operator()(cuda::CudaContext* c) const noexcept {
  cuda::destroy_context(c);
}

void ExecContext::synchronize() const {
  if (cuda_) cuda::synchronize(*cuda_);
}

}  // namespace eagerlm
