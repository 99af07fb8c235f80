// The CUDA execution context behind the opaque eagerlm::cuda::CudaContext of cuda_ops.h: one
// stream that every op of this context is queued on, a cuBLAS handle bound to that stream with a
// fixed workspace (so cuBLAS never allocates behind our back and its results are reproducible),
// and a scratch workspace for kernels that need one (the split-key attention's partial results).
// Internal to kernels/cuda/.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/cuda/cuda_ops.h"

namespace eagerlm::cuda {

struct CudaContext {
  int device = 0;
  int sm_count = 1;               // streaming multiprocessors, to size grids
  cudaStream_t stream = nullptr;  // blocking w.r.t. the legacy default stream (see cuda_memory.cu)
  cublasHandle_t cublas = nullptr;
  void* cublas_workspace = nullptr;
  size_t cublas_workspace_bytes = 0;
  GemmMath gemm_math = GemmMath::kFp32;  // how linear() and linear_transposed() multiply
  void* scratch = nullptr;               // grown on demand by scratch_buffer()
  size_t scratch_bytes = 0;
  void* typed = nullptr;  // the typed-weight products' scratch (typed_scratch())
  size_t typed_bytes = 0;
};

// At least `bytes` of device scratch, valid until the next call. Growing it waits for the
// stream first, because queued kernels may still use the old buffer.
void* scratch_buffer(CudaContext& ctx, size_t bytes);

// The same for the typed-weight products (linear_typed.cu: split-k partial sums, dequantized
// tiles of W, x rounded to 16 bits), a buffer of its own since attention's scratch holds its
// partials across its two passes. Growing is refused while the stream is captured into a graph
// (reserve_typed_scratch, called by reserve_step, sizes it beforehand).
void* typed_scratch(CudaContext& ctx, size_t bytes);
void reserve_typed_scratch(CudaContext& ctx, size_t bytes);

}  // namespace eagerlm::cuda
