// Device discovery and memory: the CUDA runtime calls behind plain C++ types, for the CUDA
// backend (engine/cuda/). Allocation failures throw KernelError(kOutOfMemory).
#pragma once

#include <cstddef>
#include <cstdint>

namespace eagerlm::cuda {

int device_count() noexcept;                // 0 when no device or no driver
const char* unavailable_reason() noexcept;  // why device_count() is 0
void* malloc_bytes(size_t bytes);
void free_bytes(void* p) noexcept;
// Synchronous copies and memsets on the legacy default stream (ordered after queued kernels).
void copy_bytes(void* dst, bool dst_on_device, const void* src, bool src_on_device, size_t bytes);
void zero_bytes(void* p, size_t bytes);
uint64_t free_memory_bytes();  // cudaMemGetInfo's free bytes on the current device

}  // namespace eagerlm::cuda
