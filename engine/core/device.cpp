#include "engine/core/device.h"

#include "engine/core/backend.h"
#include "engine/core/error.h"

namespace eagerlm {

const char* device_name(Device d) { return d == Device::kCpu ? "cpu" : "cuda"; }

std::optional<Device> device_from_name(std::string_view name) {
  if (name == "cpu") return Device::kCpu;
  if (name == "cuda") return Device::kCuda;
  return std::nullopt;
}

void* device_alloc(Device d, size_t bytes) { return backend_for(d).allocate(bytes == 0 ? 1 : bytes); }

void device_free(Device d, void* p) noexcept {
  if (!p) return;
  // Memory of a device exists only once its backend was had, so this lookup cannot fail.
  try {
    backend_for(d).release(p);
  } catch (...) {
  }
}

void device_copy(void* dst, Device dst_dev, const void* src, Device src_dev, size_t bytes) {
  if (bytes == 0) return;
  // The device side's backend does the copy (host memory is reachable from every backend).
  const Device side = dst_dev != Device::kCpu ? dst_dev : src_dev;
  backend_for(side).copy(dst, dst_dev != Device::kCpu, src, src_dev != Device::kCpu, bytes);
}

void device_memset_zero(Device d, void* p, size_t bytes) {
  if (bytes) backend_for(d).zero(p, bytes);
}

size_t device_available_bytes(Device d) { return backend_for(d).available_bytes(); }

}  // namespace eagerlm
