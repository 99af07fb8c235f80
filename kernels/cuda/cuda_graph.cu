// Capture, instantiation and replay of CUDA graphs, and the pinned staging buffer that feeds a
// replayed step (see cuda_graph.h).
//
// Why capture on a private stream: the context's stream is created blocking (see
// cuda_context.cu), so any operation on the legacy default stream, from any thread, would have
// to synchronize with it; while that stream is capturing, such an implicit join is illegal and
// invalidates the capture (and fails the other thread's call). A non-blocking stream is exempt.
// For the capture, the context's stream is swapped for the private one (cuBLAS rebound to it),
// and restored afterwards, also when the capture fails; the instantiated graph is then launched
// on the context's own stream.
#include "kernels/cuda/cuda_graph.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "kernels/common/kernel_error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"

namespace eagerlm::cuda {

namespace {

// Binds the context's cuBLAS handle to `stream`. cublasSetStream drops a user workspace, so the
// context's fixed workspace is set again each time: cuBLAS must never fall back to allocating one
// (illegal during capture, and it could change the algorithms chosen, and so the bits, between
// eager and replayed steps).
void bind_cublas(CudaContext& ctx, cudaStream_t stream) {
  EAGERLM_CUBLAS_CHECK(cublasSetStream(ctx.cublas, stream));
  EAGERLM_CUBLAS_CHECK(cublasSetWorkspace(ctx.cublas, ctx.cublas_workspace, ctx.cublas_workspace_bytes));
}

// Puts the context back on its own stream after a failed capture; the original error is the one
// reported, so failures here are swallowed.
void restore_quietly(CudaContext& ctx, cudaStream_t own) noexcept {
  ctx.stream = own;
  (void)cublasSetStream(ctx.cublas, own);
  (void)cublasSetWorkspace(ctx.cublas, ctx.cublas_workspace, ctx.cublas_workspace_bytes);
}

// A stream created for one capture and destroyed after it.
class CaptureStream {
 public:
  CaptureStream() { EAGERLM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~CaptureStream() { (void)cudaStreamDestroy(stream_); }
  CaptureStream(const CaptureStream&) = delete;
  CaptureStream& operator=(const CaptureStream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// Ends a capture that `enqueue` abandoned by throwing, discarding what was recorded, so the
// stream is usable again. Errors are swallowed: the original one is what gets reported.
void abandon_capture(cudaStream_t stream) noexcept {
  cudaGraph_t partial = nullptr;
  (void)cudaStreamEndCapture(stream, &partial);
  if (partial) (void)cudaGraphDestroy(partial);
  (void)cudaGetLastError();
}

}  // namespace

CudaGraph::~CudaGraph() {
  // An executable graph still running is freed by the runtime once it completes.
  if (exec_) (void)cudaGraphExecDestroy(exec_);
}

CudaGraph CudaGraph::capture(CudaContext& ctx, const std::function<void()>& enqueue) {
  CaptureStream stream;
  const cudaStream_t own = ctx.stream;
  cudaGraph_t graph = nullptr;
  try {
    bind_cublas(ctx, stream.get());
    ctx.stream = stream.get();
    EAGERLM_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
    try {
      enqueue();
    } catch (...) {
      abandon_capture(stream.get());
      throw;
    }
    const cudaError_t ended = cudaStreamEndCapture(stream.get(), &graph);
    if (ended != cudaSuccess) {
      if (graph) (void)cudaGraphDestroy(graph);
      throw_cuda_error(ended,
                       "cudaStreamEndCapture (the captured step did something illegal during "
                       "stream capture)",
                       __FILE__, __LINE__);
    }
  } catch (...) {
    restore_quietly(ctx, own);
    throw;
  }
  ctx.stream = own;
  try {
    bind_cublas(ctx, own);
    if (!graph) kernel_fail(KernelFault::kInternal, "CUDA graph capture recorded no graph");
  } catch (...) {
    if (graph) (void)cudaGraphDestroy(graph);
    throw;
  }
  CudaGraph result;
  const cudaError_t made = cudaGraphInstantiate(&result.exec_, graph, 0);
  (void)cudaGraphDestroy(graph);  // the executable graph does not depend on it
  if (made != cudaSuccess) {
    result.exec_ = nullptr;
    throw_cuda_error(made, "cudaGraphInstantiate", __FILE__, __LINE__);
  }
  result.scratch_ = ctx.scratch;
  result.typed_ = ctx.typed;
  result.gemm_math_ = ctx.gemm_math;
  return result;
}

bool CudaGraph::stale(const CudaContext& ctx) const {
  return ctx.scratch != scratch_ || ctx.typed != typed_ || ctx.gemm_math != gemm_math_;
}

void CudaGraph::launch(CudaContext& ctx) const {
  if (!exec_) kernel_fail(KernelFault::kInternal, "CudaGraph::launch: no graph was captured");
  EAGERLM_CUDA_CHECK(cudaGraphLaunch(exec_, ctx.stream));
}

StagingBuffer::StagingBuffer(size_t bytes) {
  // Constructed fully before anything is acquired, so the destructor releases partial work.
  StagingBuffer made;
  EAGERLM_CUDA_CHECK(cudaHostAlloc(&made.host_, bytes > 0 ? bytes : 1, cudaHostAllocDefault));
  made.bytes_ = bytes;
  cudaEvent_t event = nullptr;
  EAGERLM_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  made.copied_ = event;
  swap(made);
}

StagingBuffer::~StagingBuffer() {
  if (copied_) {
    (void)cudaEventSynchronize(copied_);  // the device may still be reading host_
    (void)cudaEventDestroy(copied_);
  }
  if (host_) (void)cudaFreeHost(host_);
  (void)cudaGetLastError();
}

void* StagingBuffer::writable() {
  if (!host_) kernel_fail(KernelFault::kInternal, "StagingBuffer::writable: no buffer allocated");
  EAGERLM_CUDA_CHECK(cudaEventSynchronize(copied_));  // at once if nothing was recorded yet
  return host_;
}

void StagingBuffer::upload(CudaContext& ctx, void* dst, size_t bytes) {
  if (bytes > bytes_)
    kernel_fail(KernelFault::kInternal, "StagingBuffer::upload: " + std::to_string(bytes) + " bytes asked of a " +
                                            std::to_string(bytes_) + "-byte staging buffer");
  if (bytes == 0) return;
  EAGERLM_CUDA_CHECK(cudaMemcpyAsync(dst, host_, bytes, cudaMemcpyHostToDevice, ctx.stream));
  EAGERLM_CUDA_CHECK(cudaEventRecord(copied_, ctx.stream));
}

}  // namespace eagerlm::cuda
