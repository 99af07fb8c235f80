// linear and linear_transposed: the projections of every layer and the tied output head, on
// OpenBLAS (sgemv for a single row, where sgemm's packing would cost more than it saves).
#include <cblas.h>

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
  if (m == 1) {
    // y[n] = wᵀ[n,k] · x[k]: w is k×n row-major, so ask for its transpose.
    cblas_sgemv(CblasRowMajor, CblasTrans, bk, bn, 1.0f, w, bn, x, 1, 1.0f, y, 1);
  } else {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, bm, bn, bk, 1.0f, x,
                static_cast<blasint>(ldx), w, bn, prefill ? 1.0f : 0.0f, y,
                static_cast<blasint>(ldy));
  }
}

void linear_transposed(const float* x, int64_t ldx, const float* w, float* y, int64_t ldy,
                       int64_t m, int64_t k, int64_t n) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0 || m == 1) fill_rows(y, ldy, nullptr, m, n);
  if (k <= 0) return;
  const auto bm = static_cast<blasint>(m);
  const auto bk = static_cast<blasint>(k);
  const auto bn = static_cast<blasint>(n);
  if (m == 1) {
    // y[n] = w[n,k] · x[k].
    cblas_sgemv(CblasRowMajor, CblasNoTrans, bn, bk, 1.0f, w, bk, x, 1, 1.0f, y, 1);
  } else {
    // sgemm with beta = 0 overwrites C without reading it, so the (vocabulary-wide) logits
    // need no zero-fill pass first.
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, bm, bn, bk, 1.0f, x,
                static_cast<blasint>(ldx), w, bk, 0.0f, y, static_cast<blasint>(ldy));
  }
}

}  // namespace eagerlm::cpu
