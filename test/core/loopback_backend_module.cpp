// A backend module for tests on machines without a GPU: it stands in for libeagerlm-cuda.so
// (loaded the same way, through EAGERLM_CUDA_MODULE) and serves Device::kCuda with host memory and
// the CPU backend's queue. Whatever goes through the module machinery (loading, the version check,
// tensors on the "device", copies between it and the host, ops dispatched through a queue from
// another shared object, errors thrown across the boundary) is exercised; the numbers are the
// CPU's, so results must match the CPU bit for bit.
//
// Built twice: as it is, and with EAGERLM_TEST_STALE_MODULE, claiming another eagerlm version,
// which the loader must refuse.
#include <string>

#include "eagerlm/version.h"
#include "engine/core/backend.h"
#include "engine/core/backend_module.h"
#include "engine/core/cpu_backend.h"

namespace eagerlm {
namespace {

class LoopbackBackend final : public Backend {
 public:
  Device device() const override { return Device::kCuda; }
  std::string unavailable_reason() const override { return ""; }
  void* allocate(size_t bytes) override { return cpu_backend().allocate(bytes); }
  void release(void* p) noexcept override { cpu_backend().release(p); }
  void copy(void* dst, bool dst_on_device, const void* src, bool src_on_device, size_t bytes) override {
    cpu_backend().copy(dst, dst_on_device, src, src_on_device, bytes);
  }
  void zero(void* p, size_t bytes) override { cpu_backend().zero(p, bytes); }
  size_t available_bytes() const override { return cpu_backend().available_bytes(); }
  std::unique_ptr<Queue> create_queue() override { return cpu_backend().create_queue(); }
  DeviceLimits measure_limits(int threads) override { return cpu_backend().measure_limits(threads); }
  DeviceLimits measure_read_bandwidth(int threads) override { return cpu_backend().measure_read_bandwidth(threads); }
};

Backend* loopback(const char**) {
  static LoopbackBackend* const backend = new LoopbackBackend;
  return backend;
}

#ifdef EAGERLM_TEST_STALE_MODULE
const BackendModule kModule = {kBackendModuleAbi, "0.0.0", &loopback};
#else
const BackendModule kModule = {kBackendModuleAbi, EAGERLM_VERSION_STRING, &loopback};
#endif

}  // namespace
}  // namespace eagerlm

extern "C" __attribute__((visibility("default"))) const eagerlm::BackendModule* eagerlm_backend_module() {
  return &eagerlm::kModule;
}
