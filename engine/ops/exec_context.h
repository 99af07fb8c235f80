// Where ops run: a device's backend and one queue on it (for CUDA: a stream, a cuBLAS handle and
// their workspaces, inside the CUDA module). Passed explicitly to every op; no globals. Also the
// door to what a backend may offer beyond the ops: staged uploads, step graphs, and sampling on
// the device; callers ask for capabilities, never for a device.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "engine/core/backend.h"
#include "engine/core/device.h"

namespace eagerlm {

std::optional<GemmMath> gemm_math_from_name(std::string_view name);  // "fp32", "tf32", "bf16"

class ExecContext {
 public:
  explicit ExecContext(Device device = Device::kCpu);  // throws kUnsupported for an unusable device
  ~ExecContext();
  ExecContext(ExecContext&&) noexcept;
  ExecContext& operator=(ExecContext&&) noexcept;

  Device device() const { return device_; }
  Queue& queue() const { return *queue_; }
  // Waits for queued work (a no-op on the CPU).
  void synchronize() const { queue_->synchronize(); }
  // The math of the products with weights of type `weights` (Queue::set_gemm_math: throws
  // kUnsupported where the backend lacks it for them).
  void set_gemm_math(GemmMath math, WeightType weights);
  GemmMath gemm_math() const { return gemm_math_; }

  // Capabilities (see backend.h).
  bool supports_graphs() const { return queue_->supports_graphs(); }
  bool samples_on_device() const { return queue_->samples_on_device(); }
  int64_t prefill_chunk() const { return queue_->prefill_chunk(); }
  std::unique_ptr<Staging> create_staging(size_t bytes) const { return queue_->create_staging(bytes); }
  std::unique_ptr<StepGraph> record(const std::function<void()>& enqueue) const { return queue_->record(enqueue); }

 private:
  Device device_;
  GemmMath gemm_math_ = GemmMath::kFp32;
  std::unique_ptr<Queue> queue_;
};

}  // namespace eagerlm
