// Grid sizing shared by the kernels: elementwise kernels use grid-stride loops over a capped
// grid, row kernels one block per row (grid-strided too), so no size overflows a launch limit.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/common/kernel_error.h"

namespace eagerlm::cuda {

constexpr int kElementwiseThreads = 256;
// Enough blocks to fill any current GPU several times over; larger sizes loop.
constexpr int64_t kMaxBlocks = int64_t(1) << 16;

inline unsigned grid_for(int64_t items, int64_t items_per_block) {
  int64_t blocks = (items + items_per_block - 1) / items_per_block;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  if (blocks < 1) blocks = 1;
  return unsigned(blocks);
}

// cuBLAS takes int sizes; larger ones are refused rather than truncated.
inline int checked_int(int64_t v, const char* op, const char* what) {
  if (v < 0 || v > int64_t(INT32_MAX))
    kernel_fail(KernelFault::kUnsupported,
                std::string("CUDA ") + op + ": " + what + " = " + std::to_string(v) + " does not fit in an int");
  return int(v);
}

}  // namespace eagerlm::cuda
