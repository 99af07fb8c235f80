// CUDA graphs for the decode step. A decode step is a hundred-odd small kernels whose launch cost
// rivals their run time; captured once into a graph, the whole step is replayed with one launch.
// A replayed graph reads its inputs from fixed device addresses, so the second piece here is the
// page-locked host staging buffer from which a step's inputs reach those addresses in one
// asynchronous copy on the context's stream. Plain C++ types only: CUDA's handle types are
// forward-declared, no CUDA header leaks out of kernels/cuda/.
#pragma once

#include <cstddef>
#include <functional>
#include <utility>

#include "kernels/cuda/cuda_ops.h"  // CudaContext, GemmMath

// The CUDA runtime's opaque handle types (cudaGraphExec_t and cudaEvent_t point to these).
struct CUgraphExec_st;
struct CUevent_st;

namespace eagerlm::cuda {

// An instantiated graph: work captured once, replayed any number of times on a context's stream.
// Everything the work reads or writes is baked in by address, so the buffers it uses must stay
// where they were at capture (arena tensors, the KV cache, the context's reserved scratch).
class CudaGraph {
 public:
  CudaGraph() = default;
  ~CudaGraph();
  CudaGraph(CudaGraph&& other) noexcept { swap(other); }
  CudaGraph& operator=(CudaGraph&& other) noexcept {
    CudaGraph(std::move(other)).swap(*this);
    return *this;
  }
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  // Records what `enqueue` queues on ctx's stream, without running any of it, and instantiates
  // it. The recording happens on a private non-blocking stream standing in for the context's
  // (thread-local capture mode), so that work other threads put on the legacy default stream
  // cannot join, and so break, the capture. Calls that capture forbids (synchronizing,
  // allocating, copying on the legacy stream) fail inside `enqueue` and are reported. If
  // `enqueue` throws or the capture fails, the context is left as it was and the error propagates.
  static CudaGraph capture(CudaContext& ctx, const std::function<void()>& enqueue);

  bool empty() const { return exec_ == nullptr; }
  // True when the context changed under the graph since its capture (a scratch workspace was
  // reallocated, or its GEMM math switched), so the graph must be captured again before use.
  bool stale(const CudaContext& ctx) const;
  // Queues one replay on ctx's stream.
  void launch(CudaContext& ctx) const;

 private:
  void swap(CudaGraph& other) noexcept {
    std::swap(exec_, other.exec_);
    std::swap(scratch_, other.scratch_);
    std::swap(typed_, other.typed_);
    std::swap(gemm_math_, other.gemm_math_);
  }
  CUgraphExec_st* exec_ = nullptr;
  // What the context held at capture time.
  const void* scratch_ = nullptr;
  const void* typed_ = nullptr;
  GemmMath gemm_math_ = GemmMath::kFp32;
};

// Page-locked host memory for the inputs of one step, copied to the device asynchronously (and
// so truly overlapped with host work) on the context's stream. An event recorded after each copy
// keeps the next step from overwriting the staging memory before the device has read it.
class StagingBuffer {
 public:
  StagingBuffer() = default;
  explicit StagingBuffer(size_t bytes);  // on the current device's host side; throws on failure
  ~StagingBuffer();
  StagingBuffer(StagingBuffer&& other) noexcept { swap(other); }
  StagingBuffer& operator=(StagingBuffer&& other) noexcept {
    StagingBuffer(std::move(other)).swap(*this);
    return *this;
  }
  StagingBuffer(const StagingBuffer&) = delete;
  StagingBuffer& operator=(const StagingBuffer&) = delete;

  size_t capacity() const { return bytes_; }
  // The staging memory, once the last upload from it has finished reading it.
  void* writable();
  // Queues a copy of the first `bytes` of the staging memory to device memory `dst` on ctx's
  // stream; kernels queued after it see the data.
  void upload(CudaContext& ctx, void* dst, size_t bytes);

 private:
  void swap(StagingBuffer& other) noexcept {
    std::swap(host_, other.host_);
    std::swap(bytes_, other.bytes_);
    std::swap(copied_, other.copied_);
  }
  void* host_ = nullptr;
  size_t bytes_ = 0;
  CUevent_st* copied_ = nullptr;  // recorded after each upload
};

}  // namespace eagerlm::cuda
