// target_logprobs: log p(target) under the tied output head for every row, with the vocabulary
// visited in blocks so that the [rows, vocab] logits never exist (for a 512-token step of GPT-2
// they would be 103 MB, against this kernel's 1 MB of scratch per thread).
//
// The work is cut into tasks of (vocabulary block, row block): each task computes its logits
// h[rows] · w[block]ᵀ with a single-threaded linear_transposed into thread-local scratch and
// reduces every row to (block maximum, Σ exp(logit - block maximum)), keeping the target's logit
// if the target falls in the block. A second pass combines each row's blocks in block order:
// M = max of the maxima, S = Σ sum_b·exp(max_b - M), out = (logit_target - M) - log S. The tasks
// are fixed by the shapes alone and each writes its own cells, so the result is the same on any
// number of threads.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/vec_exp.h"

#include "kernels/cpu/isa_begin.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

// This variant's own product (linear.cpp), not the dispatched entry point of cpu_ops.h.
void linear_transposed(const float* x, int64_t ldx, const float* w, float* y, int64_t ldy, int64_t m, int64_t k,
                       int64_t n);

namespace {

// Rows per task: a whole default step (512 rows), since OpenBLAS's sgemm runs best on tall
// products (on Zen 4, [128 x 1024] blocks took 14% more CPU time than [512 x 512] ones, which
// match one sgemm over the whole vocabulary). The scratch block [kRowBlock, kTargetLogprobBlock]
// is then 1 MB, about a core's L2, so the reduction reads what the product just wrote from cache.
constexpr int64_t kRowBlock = 512;

// Multiply-adds below which one thread does everything (an OpenMP region costs microseconds).
constexpr int64_t kParallelWork = int64_t(1) << 18;

struct BlockStats {
  float max, sum;
};

// One row's logits z[0, n) in one block: its maximum and Σ exp(z - maximum). NaN logits make the
// sum NaN (vec_exp passes NaN through), so they reach the output.
BlockStats reduce_block(const float* z, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  // Written as a comparison: GCC 12 does not vectorise a std::max reduction.
#pragma omp simd reduction(max : m)
  for (int64_t j = 0; j < n; ++j) m = z[j] > m ? z[j] : m;
  float s = 0.0f;
#pragma omp simd reduction(+ : s)
  for (int64_t j = 0; j < n; ++j) s += detail::vec_exp(z[j] - m);
  return {m, s};
}

}  // namespace

void target_logprobs(const float* h, int64_t ldh, const float* w, const int32_t* targets, float* out, int64_t rows,
                     int64_t d, int64_t vocab) {
  if (rows <= 0) return;
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  if (vocab <= 0) {
    std::fill(out, out + rows, kNaN);  // no distribution to take a log-probability in
    return;
  }
  const int64_t n_blocks = (vocab + kTargetLogprobBlock - 1) / kTargetLogprobBlock;
  const int64_t n_row_blocks = (rows + kRowBlock - 1) / kRowBlock;
  const int64_t n_tasks = n_blocks * n_row_blocks;
  // stats[b * rows + r]: block b of row r. target_logit[r] is written by the one task whose block
  // holds targets[r] (none for a target out of range: it stays NaN).
  std::vector<BlockStats> stats(size_t(n_blocks * rows));
  std::vector<float> target_logit(size_t(rows), kNaN);

  auto run_task = [&](int64_t task) {
    thread_local std::vector<float> scratch;
    scratch.resize(size_t(kRowBlock * kTargetLogprobBlock));
    const int64_t b = task / n_row_blocks, r0 = (task % n_row_blocks) * kRowBlock;
    const int64_t v0 = b * kTargetLogprobBlock, nv = std::min(kTargetLogprobBlock, vocab - v0);
    const int64_t nr = std::min(kRowBlock, rows - r0);
    linear_transposed(h + r0 * ldh, ldh, w + v0 * d, scratch.data(), nv, nr, d, nv);
    for (int64_t i = 0; i < nr; ++i) {
      const float* z = scratch.data() + i * nv;
      stats[size_t(b * rows + r0 + i)] = reduce_block(z, nv);
      const int64_t t = targets[r0 + i];
      if (t >= v0 && t < v0 + nv) target_logit[size_t(r0 + i)] = z[t - v0];
    }
  };
  // Tasks are numbered block-major, so a thread's consecutive tasks share one block of w while it
  // is in cache. Inside a task linear_transposed sees parallel_threads() == 1 and stays on its thread.
  const int threads = rows * d * vocab < kParallelWork ? 1 : parallel_threads();
  parallel_ranges(n_tasks, [&](int64_t t0, int64_t t1) {
    for (int64_t task = t0; task < t1; ++task) run_task(task);
  }, 1, threads);

  for (int64_t r = 0; r < rows; ++r) {
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t b = 0; b < n_blocks; ++b) m = std::max(m, stats[size_t(b * rows + r)].max);
    float s = 0.0f;
    for (int64_t b = 0; b < n_blocks; ++b) {
      const BlockStats& st = stats[size_t(b * rows + r)];
      s += st.sum * std::exp(st.max - m);
    }
    out[r] = (target_logit[size_t(r)] - m) - std::log(s);
  }
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
