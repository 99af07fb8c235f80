#include "engine/ops/exec_context.h"

#include <optional>
#include <string>
#include <string_view>

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

const char* gemm_math_name(GemmMath math) {
  switch (math) {
    case GemmMath::kFp32: return "fp32";
    case GemmMath::kTf32: return "tf32";
    case GemmMath::kBf16: return "bf16";
  }
  return "?";
}

std::optional<GemmMath> gemm_math_from_name(std::string_view name) {
  for (GemmMath m : {GemmMath::kFp32, GemmMath::kTf32, GemmMath::kBf16})
    if (name == gemm_math_name(m)) return m;
  return std::nullopt;
}

void ExecContext::set_gemm_math(GemmMath math) {
  if (math == gemm_math_) return;
  if (!cuda_)
    throw_error(ErrorCode::kUnsupported, std::string("GEMM math ") + gemm_math_name(math) +
                                             " needs a CUDA device; the CPU computes in fp32");
  cuda::set_gemm_math(*cuda_, math);
  gemm_math_ = math;
}

}  // namespace eagerlm
