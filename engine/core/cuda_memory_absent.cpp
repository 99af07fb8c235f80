// Linked when eagerlm is built without the CUDA backend: every CUDA request is refused cleanly.
#include "engine/core/cuda_memory.h"
#include "engine/core/error.h"

namespace eagerlm::cuda {

namespace {
[[noreturn]] void refuse() {
  throw_error(ErrorCode::kUnsupported, "eagerlm was built without CUDA (EAGERLM_CUDA=OFF or no nvcc)");
}
}  // namespace

int device_count() noexcept { return 0; }
const char* unavailable_reason() noexcept { return "eagerlm was built without CUDA"; }
void* malloc_bytes(size_t) { refuse(); }
void free_bytes(void*) noexcept {}
void copy_bytes(void*, bool, const void*, bool, size_t) { refuse(); }
void zero_bytes(void*, size_t) { refuse(); }

}  // namespace eagerlm::cuda
