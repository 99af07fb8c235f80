// Where memory lives and ops run. Device memory is reached only through these functions (which
// go to the device's backend, engine/core/backend.h), so engine code is the same for every device.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "eagerlm/common.hpp"  // Device, device_name, cuda_available (public API)

namespace eagerlm {

std::optional<Device> device_from_name(std::string_view name);  // "cpu" | "cuda"

// Why CUDA is unavailable, for error messages (no module, no driver, no device, ...). Asking
// loads the CUDA module if it is not loaded yet.
std::string cuda_unavailable_reason();

// Raw allocation on a device; throws Error(kOutOfMemory) on failure, Error(kUnsupported) when the
// device is unavailable. CPU memory is 64-byte aligned (a cache line, and any SIMD load).
void* device_alloc(Device d, size_t bytes);
void device_free(Device d, void* p) noexcept;
// Copies between any two devices (host<->device, device<->device); synchronous.
void device_copy(void* dst, Device dst_dev, const void* src, Device src_dev, size_t bytes);
void device_memset_zero(Device d, void* p, size_t bytes);
// Bytes that could be allocated on the device now (0 if unknown).
size_t device_available_bytes(Device d);

}  // namespace eagerlm
