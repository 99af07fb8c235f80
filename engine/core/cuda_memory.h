// The CUDA runtime calls the engine core needs, behind plain C++ types. Implemented in
// kernels/cuda/cuda_memory.cu when the CUDA backend is built, and by
// engine/core/cuda_memory_absent.cpp (which reports "built without CUDA") when it is not.
#pragma once

#include <cstddef>

namespace eagerlm::cuda {

int device_count() noexcept;                  // 0 when no device or no CUDA in this build
const char* unavailable_reason() noexcept;    // why device_count() is 0
void* malloc_bytes(size_t bytes);             // throws Error(kOutOfMemory)
void free_bytes(void* p) noexcept;
void copy_bytes(void* dst, bool dst_on_device, const void* src, bool src_on_device, size_t bytes);
void zero_bytes(void* p, size_t bytes);

}  // namespace eagerlm::cuda
