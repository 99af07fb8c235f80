#include "engine/ops/exec_context.h"

#include <string>

#include "engine/core/error.h"

namespace eagerlm {

ExecContext::ExecContext(Device device) : device_(device), queue_(backend_for(device).create_queue()) {}

ExecContext::~ExecContext() = default;
ExecContext::ExecContext(ExecContext&&) noexcept = default;
ExecContext& ExecContext::operator=(ExecContext&&) noexcept = default;

std::optional<GemmMath> gemm_math_from_name(std::string_view name) {
  for (GemmMath m : {GemmMath::kFp32, GemmMath::kTf32, GemmMath::kBf16})
    if (name == gemm_math_name(m)) return m;
  return std::nullopt;
}

void ExecContext::set_gemm_math(GemmMath math, WeightType weights) {
  if (math == gemm_math_) return;
  queue_->set_gemm_math(math, weights);
  gemm_math_ = math;
}

}  // namespace eagerlm
