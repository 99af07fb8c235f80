// How kernels report a failure they cannot avoid (a CUDA runtime error, a size a library cannot
// take, an allocation that failed): they throw KernelError. Kernels sit below the engine and may
// not use its Error type; the backend that calls them (engine/core/cpu_backend.cpp,
// engine/cuda/) turns a KernelError into an eagerlm::Error with the matching code, so users only
// ever see eagerlm::Error.
#pragma once

#include <stdexcept>
#include <string>

namespace eagerlm {

enum class KernelFault {
  kInvalidArgument,  // a value the caller should not have passed (e.g. a bad sampling option)
  kUnsupported,      // valid, but beyond what this kernel or device can do
  kOutOfMemory,      // an allocation failed
  kInternal,         // a broken invariant, or a device failure
};

class KernelError : public std::runtime_error {
 public:
  KernelError(KernelFault fault, const std::string& message) : std::runtime_error(message), fault_(fault) {}
  KernelFault fault() const noexcept { return fault_; }

 private:
  KernelFault fault_;
};

[[noreturn]] inline void kernel_fail(KernelFault fault, const std::string& message) {
  throw KernelError(fault, message);
}

}  // namespace eagerlm
