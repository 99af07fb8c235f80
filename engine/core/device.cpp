#include "engine/core/device.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "engine/core/cuda_memory.h"
#include "engine/core/error.h"

namespace eagerlm {

const char* device_name(Device d) { return d == Device::kCpu ? "cpu" : "cuda"; }

std::optional<Device> device_from_name(std::string_view name) {
  if (name == "cpu") return Device::kCpu;
  if (name == "cuda") return Device::kCuda;
  return std::nullopt;
}

bool cuda_available() { return cuda::device_count() > 0; }
const char* cuda_unavailable_reason() { return cuda::unavailable_reason(); }

static void require_cuda() {
  if (!cuda_available())
    throw_error(ErrorCode::kUnsupported,
                std::string("CUDA device requested but ") + cuda_unavailable_reason());
}

void* device_alloc(Device d, size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (d == Device::kCuda) {
    require_cuda();
    return cuda::malloc_bytes(bytes);
  }
  const size_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (!p)
    throw_error(ErrorCode::kOutOfMemory,
                "could not allocate " + std::to_string(bytes) + " bytes of host memory");
  return p;
}

void device_free(Device d, void* p) noexcept {
  if (!p) return;
  if (d == Device::kCuda)
    cuda::free_bytes(p);
  else
    std::free(p);
}

void device_copy(void* dst, Device dst_dev, const void* src, Device src_dev, size_t bytes) {
  if (bytes == 0) return;
  if (dst_dev == Device::kCpu && src_dev == Device::kCpu) {
    std::memcpy(dst, src, bytes);
    return;
  }
  require_cuda();
  cuda::copy_bytes(dst, dst_dev == Device::kCuda, src, src_dev == Device::kCuda, bytes);
}

void device_memset_zero(Device d, void* p, size_t bytes) {
  if (d == Device::kCpu) {
    std::memset(p, 0, bytes);
    return;
  }
  require_cuda();
  cuda::zero_bytes(p, bytes);
}

}  // namespace eagerlm
