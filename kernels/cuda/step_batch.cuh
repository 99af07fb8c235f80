// Device-side lookup of the sequence that owns a row of a StepBatch (kernels/common/kv_layout.h). The
// batch arrays live on the device and need not be sorted by row, so the block scans them
// cooperatively; a row owned by no sequence yields -1 (the kernel then leaves that row alone,
// as the CPU kernels do).
#pragma once

#include <cuda_runtime.h>

#include <climits>

#include "kernels/common/kv_layout.h"

namespace eagerlm::cuda {

// Must be called by every thread of the block (it synchronizes); all get the same answer, the
// lowest matching sequence index if the batch is inconsistent.
__device__ __forceinline__ int block_find_sequence(const StepBatch& batch, int row) {
  __shared__ int found;
  if (threadIdx.x == 0) found = INT_MAX;
  __syncthreads();
  for (int s = int(threadIdx.x); s < batch.n_seq; s += int(blockDim.x)) {
    const int start = batch.row_start[s];
    if (row >= start && row - start < batch.n_new[s]) atomicMin(&found, s);
  }
  __syncthreads();
  const int s = found;
  __syncthreads();  // everyone has read `found` before a later call may reset it
  return s == INT_MAX ? -1 : s;
}

}  // namespace eagerlm::cuda
