// Linked when eagerlm is built without CUDA: ExecContext refuses kCuda before any of these can
// be reached, so each one only guards against a broken invariant.
#include "engine/core/error.h"
#include "kernels/cuda/cuda_ops.h"

namespace eagerlm::cuda {

namespace {
[[noreturn]] void absent(const char* op) {
  throw_error(ErrorCode::kUnsupported, std::string("CUDA op ") + op + ": eagerlm was built without CUDA");
}
}  // namespace

CudaContext* create_context() { absent("create_context"); }
void destroy_context(CudaContext*) noexcept {}
void synchronize(CudaContext&) { absent("synchronize"); }
void set_gemm_math(CudaContext&, GemmMath) { absent("set_gemm_math"); }
void linear(CudaContext&, const float*, int64_t, const float*, const float*, float*, int64_t,
            int64_t, int64_t, int64_t) { absent("linear"); }
void linear_transposed(CudaContext&, const float*, int64_t, const float*, float*, int64_t, int64_t,
                       int64_t, int64_t) { absent("linear_transposed"); }
void layer_norm(CudaContext&, const float*, const float*, const float*, float*, int64_t, int64_t,
                float) { absent("layer_norm"); }
void gelu(CudaContext&, const float*, float*, int64_t) { absent("gelu"); }
void add(CudaContext&, const float*, const float*, float*, int64_t) { absent("add"); }
void embedding(CudaContext&, const int32_t*, const int32_t*, int64_t, const float*, const float*,
               int64_t, float*) { absent("embedding"); }
void softmax(CudaContext&, float*, int64_t, int64_t, const int32_t*) { absent("softmax"); }
void kv_append(CudaContext&, const float*, const StepBatch&, const KvLayout&, float*, float*) {
  absent("kv_append");
}
void attention(CudaContext&, const float*, int64_t, const StepBatch&, const KvLayout&, const float*,
               const float*, float, float*, int64_t) { absent("attention"); }

}  // namespace eagerlm::cuda
