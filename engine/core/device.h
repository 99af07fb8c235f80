// Where memory lives and ops run. Device memory is reached only through these functions, so that
// engine code compiles the same with or without the CUDA backend.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "eagerlm/common.hpp"  // Device, device_name, cuda_available (public API)

namespace eagerlm {

std::optional<Device> device_from_name(std::string_view name);  // "cpu" | "cuda"

// Why CUDA is unavailable, for error messages ("built without CUDA", "no CUDA device", ...).
const char* cuda_unavailable_reason();

// Raw allocation on a device; throws Error(kOutOfMemory) on failure. CPU memory is 64-byte
// aligned (a cache line, and enough for any SIMD load).
void* device_alloc(Device d, size_t bytes);
void device_free(Device d, void* p) noexcept;
// Copies between any two devices (host<->device, device<->device); synchronous.
void device_copy(void* dst, Device dst_dev, const void* src, Device src_dev, size_t bytes);
void device_memset_zero(Device d, void* p, size_t bytes);

}  // namespace eagerlm
