// How the matrix-product kernels share work between threads: the output columns are split across
// the kernels' threads (parallel.h), each computing its columns whole. (When the products ran on OpenBLAS,
// its own thread pool fighting OpenMP's over two cores made every GEMM several times slower;
// engine/core/threads.h still keeps OpenBLAS single-threaded for any other caller.) Which thread
// computes a column never changes its value: every element's arithmetic is fixed (see
// linear_typed.cpp).
#pragma once

#include "kernels/cpu/parallel.h"

#include <algorithm>
#include <cstdint>

namespace eagerlm::cpu::detail {

// Calls body(n0, n1) on column blocks covering [0, n), one per thread, when the product
// of m·k·n multiply-adds is big enough to be worth splitting. Blocks are multiples of `granule`
// columns (16 by default: one AVX-512 vector), so only the last block can end in a partial one.
template <typename Body>
void split_columns(int64_t m, int64_t k, int64_t n, const Body& body, int64_t granule = 16) {
  const int threads = parallel_threads();
  if (threads <= 1 || m * k * n < (int64_t(1) << 18) || n < 2 * granule) {
    body(int64_t(0), n);
    return;
  }
  const int64_t block = (n + threads * granule - 1) / (threads * granule) * granule;
  parallel_for(
      threads,
      [&](int64_t t) {
        const int64_t n0 = std::min(n, t * block), n1 = std::min(n, n0 + block);
        if (n1 > n0) body(n0, n1);
      },
      threads);
}

}  // namespace eagerlm::cpu::detail
