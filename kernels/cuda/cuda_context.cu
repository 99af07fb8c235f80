// Creation and teardown of the CUDA execution context (see cuda_context.h), and the cuBLAS part
// of the error reporting of cuda_check.h.
#include "kernels/cuda/cuda_context.h"

#include <memory>
#include <string>

#include "kernels/common/kernel_error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_ops.h"

namespace eagerlm::cuda {

namespace {
// cuBLAS recommends 32 MiB of workspace on Hopper (4 MiB is enough before); a fixed buffer keeps
// cuBLAS from allocating during a forward pass and makes its algorithm choice repeatable.
constexpr size_t kCublasWorkspaceBytes = size_t(32) << 20;

void release(CudaContext& ctx) noexcept {
  if (ctx.stream) (void)cudaStreamSynchronize(ctx.stream);
  if (ctx.cublas) (void)cublasDestroy(ctx.cublas);
  if (ctx.cublas_workspace) (void)cudaFree(ctx.cublas_workspace);
  if (ctx.scratch) (void)cudaFree(ctx.scratch);
  if (ctx.typed) (void)cudaFree(ctx.typed);
  if (ctx.stream) (void)cudaStreamDestroy(ctx.stream);
  (void)cudaGetLastError();
  ctx = CudaContext{};
}

struct ContextReleaser {
  void operator()(CudaContext* c) const noexcept {
    release(*c);
    delete c;
  }
};
}  // namespace

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  const KernelFault code = status == CUBLAS_STATUS_ALLOC_FAILED ? KernelFault::kOutOfMemory : KernelFault::kInternal;
  kernel_fail(code, std::string("cuBLAS call ") + call + " failed at " + file + ":" + std::to_string(line) + ": " +
                        cublasGetStatusName(status) + " (" + cublasGetStatusString(status) + ")");
}

CudaContext* create_context() {
  std::unique_ptr<CudaContext, ContextReleaser> ctx(new CudaContext);
  EAGERLM_CUDA_CHECK(cudaGetDevice(&ctx->device));
  EAGERLM_CUDA_CHECK(cudaDeviceGetAttribute(&ctx->sm_count, cudaDevAttrMultiProcessorCount, ctx->device));
  if (ctx->sm_count < 1) ctx->sm_count = 1;
  // Blocking (not cudaStreamNonBlocking) on purpose: synchronous cudaMemcpy on the legacy
  // default stream must wait for this stream's kernels.
  EAGERLM_CUDA_CHECK(cudaStreamCreate(&ctx->stream));
  EAGERLM_CUBLAS_CHECK(cublasCreate(&ctx->cublas));
  EAGERLM_CUBLAS_CHECK(cublasSetStream(ctx->cublas, ctx->stream));
  EAGERLM_CUDA_CHECK(cudaMalloc(&ctx->cublas_workspace, kCublasWorkspaceBytes));
  ctx->cublas_workspace_bytes = kCublasWorkspaceBytes;
  EAGERLM_CUBLAS_CHECK(cublasSetWorkspace(ctx->cublas, ctx->cublas_workspace, ctx->cublas_workspace_bytes));
  // Plain FP32 (no TF32 tensor-core rounding), host scalars, no atomics: results match the CPU
  // to float rounding and repeat bit for bit from run to run.
  EAGERLM_CUBLAS_CHECK(cublasSetMathMode(ctx->cublas, CUBLAS_DEFAULT_MATH));
  EAGERLM_CUBLAS_CHECK(cublasSetPointerMode(ctx->cublas, CUBLAS_POINTER_MODE_HOST));
  EAGERLM_CUBLAS_CHECK(cublasSetAtomicsMode(ctx->cublas, CUBLAS_ATOMICS_NOT_ALLOWED));
  return ctx.release();
}

void destroy_context(CudaContext* ctx) noexcept {
  if (!ctx) return;
  ContextReleaser{}(ctx);
}

void synchronize(CudaContext& ctx) { EAGERLM_CUDA_CHECK(cudaStreamSynchronize(ctx.stream)); }

void* scratch_buffer(CudaContext& ctx, size_t bytes) {
  if (bytes <= ctx.scratch_bytes) return ctx.scratch;
  EAGERLM_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  if (ctx.scratch) {
    EAGERLM_CUDA_CHECK(cudaFree(ctx.scratch));
    ctx.scratch = nullptr;
    ctx.scratch_bytes = 0;
  }
  // Grow geometrically so a slowly growing need does not reallocate at every step.
  const size_t want = bytes < (size_t(1) << 20) ? (size_t(1) << 20) : bytes + bytes / 2;
  EAGERLM_CUDA_CHECK(cudaMalloc(&ctx.scratch, want));
  ctx.scratch_bytes = want;
  return ctx.scratch;
}

void reserve_typed_scratch(CudaContext& ctx, size_t bytes) {
  if (bytes <= ctx.typed_bytes) return;
  EAGERLM_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  if (ctx.typed) {
    EAGERLM_CUDA_CHECK(cudaFree(ctx.typed));
    ctx.typed = nullptr;
    ctx.typed_bytes = 0;
  }
  EAGERLM_CUDA_CHECK(cudaMalloc(&ctx.typed, bytes));
  ctx.typed_bytes = bytes;
}

void* typed_scratch(CudaContext& ctx, size_t bytes) {
  if (bytes <= ctx.typed_bytes) return ctx.typed;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  EAGERLM_CUDA_CHECK(cudaStreamIsCapturing(ctx.stream, &status));
  if (status != cudaStreamCaptureStatusNone)
    kernel_fail(KernelFault::kInternal, "CUDA typed-weight products need " + std::to_string(bytes) +
                                            " bytes of scratch but only " + std::to_string(ctx.typed_bytes) +
                                            " were reserved, and it cannot grow during graph capture");
  reserve_typed_scratch(ctx, bytes + bytes / 2);
  return ctx.typed;
}

}  // namespace eagerlm::cuda
