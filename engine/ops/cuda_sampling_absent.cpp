// Linked when eagerlm is built without CUDA: the device-sampling entry points of
// kernels/cuda/cuda_sampling.h. No CUDA context can exist in such a build, so these only guard
// against a broken invariant.
#include <string>

#include "engine/core/error.h"
#include "kernels/cuda/cuda_sampling.h"

namespace eagerlm::cuda {

namespace {
[[noreturn]] void absent(const char* op) {
  throw_error(ErrorCode::kUnsupported, std::string("CUDA op ") + op + ": eagerlm was built without CUDA");
}
}  // namespace

void sample_rows(CudaContext&, const float*, int64_t, int64_t, int64_t, const SampleRow*, const int32_t*,
                 uint8_t*, int64_t, const SampleParams&, SampleResult*, uint8_t*) {
  absent("sample_rows");
}

void curand_philox_words(CudaContext&, uint64_t, uint64_t, uint64_t, int64_t, uint32_t*) {
  absent("curand_philox_words");
}

}  // namespace eagerlm::cuda
