// linear and linear_transposed: the projections of every layer and the tied output head, on
// OpenBLAS (sgemv for a single row, where sgemm's packing would cost more than it saves), except
// the single-row output head, which is our own loop of dot products (below).
//
// Threads: OpenBLAS runs single-threaded and the output columns are split across eagerlm's
// OpenMP threads. Two thread pools (OpenBLAS's and OpenMP's, each spinning while idle) fighting
// over two cores made every GEMM several times slower; one pool removes the contention.
#include <cblas.h>
#include <omp.h>

#include <algorithm>

#include "kernels/cpu/cpu_ops.h"

namespace eagerlm::cpu {

namespace {

// Fills the m×n block of y (row stride ldy) with bias, or with zeros when bias is null. The
// BLAS call then accumulates into it with beta = 1, so the bias is added once and whatever y held
// before (even NaN) never leaks into the result. sgemv always gets a prefilled y: some OpenBLAS
// versions scale y by beta = 0 as a multiply, which would keep a NaN.
void fill_rows(float* y, int64_t ldy, const float* bias, int64_t m, int64_t n) {
  for (int64_t r = 0; r < m; ++r) {
    float* row = y + r * ldy;
    if (bias) {
      std::copy(bias, bias + n, row);
    } else {
      std::fill(row, row + n, 0.0f);
    }
  }
}

// Calls body(n0, n1) on column blocks covering [0, n), one per OpenMP thread, when the product
// is big enough to be worth splitting. Blocks are multiples of 16 columns (one AVX-512 vector).
template <typename Body>
void split_columns(int64_t m, int64_t k, int64_t n, const Body& body) {
  static const bool blas_single_threaded = (openblas_set_num_threads(1), true);
  (void)blas_single_threaded;
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (threads <= 1 || m * k * n < (int64_t(1) << 18) || n < 32) {
    body(int64_t(0), n);
    return;
  }
  const int64_t block = (n + threads * 16 - 1) / (threads * 16) * 16;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    const int64_t n0 = std::min(n, int64_t(t) * block), n1 = std::min(n, n0 + block);
    if (n1 > n0) body(n0, n1);
  }
}

// y[j] = w[j, :] · x for j in [0, n), w row-major [n, k]: one row after another, each a single
// sequential stream. For the single-row output head (50257 rows of 768) this reads wte ~15%
// faster than OpenBLAS's sgemv (5.3-5.6 ms against 6.2-6.7 ms on 2 Zen 4 cores), whose
// several interleaved row streams the prefetchers follow less well. Each y[j] is one thread's
// fixed-order sum, so results do not depend on the thread count.
void dot_rows(const float* x, const float* w, int64_t k, float* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const float* row = w + j * k;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < k; ++i) sum += row[i] * x[i];
    y[j] = sum;
  }
}

}  // namespace

void linear(const float* x, int64_t ldx, const float* w, const float* bias, float* y, int64_t ldy,
            int64_t m, int64_t k, int64_t n) {
  if (m <= 0 || n <= 0) return;
  // Without a bias, sgemm's beta = 0 overwrites y unread; otherwise y is prefilled and beta = 1.
  const bool prefill = bias != nullptr || m == 1 || k <= 0;
  if (prefill) fill_rows(y, ldy, bias, m, n);
  if (k <= 0) return;  // an empty sum: y is the bias (BLAS would reject the zero leading dims)
  const auto bm = static_cast<blasint>(m);
  const auto bk = static_cast<blasint>(k);
  const auto bn = static_cast<blasint>(n);
  split_columns(m, k, n, [&](int64_t n0, int64_t n1) {
    const auto cols = static_cast<blasint>(n1 - n0);
    if (m == 1) {
      // y[n0:n1] = w[:, n0:n1]ᵀ · x: w is k×n row-major, so ask for its transpose.
      cblas_sgemv(CblasRowMajor, CblasTrans, bk, cols, 1.0f, w + n0, bn, x, 1, 1.0f, y + n0, 1);
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, bm, cols, bk, 1.0f, x,
                  static_cast<blasint>(ldx), w + n0, bn, prefill ? 1.0f : 0.0f, y + n0,
                  static_cast<blasint>(ldy));
    }
  });
}

void linear_transposed(const float* x, int64_t ldx, const float* w, float* y, int64_t ldy,
                       int64_t m, int64_t k, int64_t n) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    fill_rows(y, ldy, nullptr, m, n);
    return;
  }
  const auto bm = static_cast<blasint>(m);
  const auto bk = static_cast<blasint>(k);
  split_columns(m, k, n, [&](int64_t n0, int64_t n1) {
    const auto rows = static_cast<blasint>(n1 - n0);
    if (m == 1) {
      dot_rows(x, w + n0 * k, k, y + n0, n1 - n0);  // y[n0:n1] = w[n0:n1, :] · x
    } else {
      // sgemm with beta = 0 overwrites C without reading it, so the (vocabulary-wide) logits
      // need no zero-fill pass first.
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, bm, rows, bk, 1.0f, x,
                  static_cast<blasint>(ldx), w + n0 * k, bk, 0.0f, y + n0, static_cast<blasint>(ldy));
    }
  });
}

}  // namespace eagerlm::cpu
