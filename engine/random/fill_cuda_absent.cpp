// engine/random/fill_cuda.h for builds without the CUDA backend: every call reports that.
#include <string>

#include "engine/core/device.h"
#include "engine/core/error.h"
#include "engine/random/fill_cuda.h"

namespace eagerlm::rng::cuda {

namespace {
[[noreturn]] void unavailable() {
  throw_error(ErrorCode::kUnsupported,
              std::string("CUDA initialization requested but ") + cuda_unavailable_reason());
}
}  // namespace

void fill_normal(Key, float, DType, void*, int64_t, uint64_t) { unavailable(); }
void fill_constant(float, DType, void*, int64_t) { unavailable(); }
uint64_t free_memory_bytes() { unavailable(); }

}  // namespace eagerlm::rng::cuda
