// Sampling on the GPU (cuda_sampling.h): one block per logits row (grid-strided). Per row:
//   1. record the fed tokens in the slot's presence row (cleared first when the sequence starts);
//   2. argmax of the penalized logits (largest key, lowest id): the greedy answer, bit for bit the
//      CPU's argmax;
//   3. otherwise the cut of top-k and top-p (sampling::find_cut: a 16-round descent over the
//      32-bit logit key, each round one pass that counts or weighs the tokens at or above three
//      candidate keys), min-p as a per-token test, and one Philox draw u: the token where the
//      running kept mass, in id order, first exceeds u · (kept mass) (a block scan over contiguous
//      chunks of ids, then one thread walks its chunk);
//   4. with logprobs, log p(id) under the raw logits' softmax.
// Masses are fixed-point integers, so every reduction is exact and the result deterministic.
// Every branch that surrounds a __syncthreads() depends only on the row and the options, never
// on the thread, so the whole block takes it together.
#include <curand_kernel.h>

#include <cmath>
#include <string>

#include "kernels/common/kernel_error.h"
#include "kernels/common/sampling_philox.h"
#include "kernels/common/sampling_thresholds.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_sampling.h"
#include "kernels/cuda/launch.h"

namespace eagerlm::cuda {

namespace {

using sampling::Cut;
using sampling::key_logit;
using sampling::LevelStats;
using sampling::logit_key;
using sampling::Rule;
using sampling::Weigher;

constexpr int kMaxThreads = 512;
constexpr int kMaxWarps = kMaxThreads / 32;

struct KernelArgs {
  const float* logits;
  int64_t ld;
  int64_t n_rows;
  int64_t vocab;
  const SampleRow* rows;
  const int32_t* tokens;
  uint8_t* presence;
  int64_t n_slots;
  Rule rule;
  uint64_t seed;
  bool logprobs;
  SampleResult* out;
  uint8_t* kept;
};

// Shared memory of one block: reduction partials (reused by back-to-back reductions: each one
// synchronizes before writing them) and the drawn token.
struct Shared {
  uint64_t partial[3][kMaxWarps];
  uint32_t best_key[kMaxWarps];
  int32_t best_id[kMaxWarps];
  int32_t choice;
};

__device__ __forceinline__ int lane_id() { return int(threadIdx.x) & 31; }
__device__ __forceinline__ int warp_id() { return int(threadIdx.x) >> 5; }
__device__ __forceinline__ int warp_count() { return int(blockDim.x) >> 5; }

// Block-wide sums of N counters; every thread gets the totals.
template <int N>
__device__ void block_sum(uint64_t (&v)[N], Shared& sh) {
  for (int k = 0; k < N; ++k)
    for (int offset = 16; offset > 0; offset >>= 1) v[k] += __shfl_xor_sync(0xffffffffu, v[k], offset);
  __syncthreads();  // the previous readers of sh.partial are done
  if (lane_id() == 0)
    for (int k = 0; k < N; ++k) sh.partial[k][warp_id()] = v[k];
  __syncthreads();
  for (int k = 0; k < N; ++k) {
    uint64_t total = 0;
    for (int w = 0; w < warp_count(); ++w) total += sh.partial[k][w];
    v[k] = total;
  }
}

// Exclusive prefix sum over the threads in order; `total` gets the block's sum. Uses row `k` of
// the partials.
__device__ uint64_t block_exclusive_scan(uint64_t v, Shared& sh, int k, uint64_t& total) {
  uint64_t inclusive = v;
  for (int offset = 1; offset < 32; offset <<= 1) {
    const uint64_t up = __shfl_up_sync(0xffffffffu, inclusive, offset);
    if (lane_id() >= offset) inclusive += up;
  }
  __syncthreads();
  if (lane_id() == 31) sh.partial[k][warp_id()] = inclusive;
  __syncthreads();
  uint64_t before = 0;
  total = 0;
  for (int w = 0; w < warp_count(); ++w) {
    if (w < warp_id()) before += sh.partial[k][w];
    total += sh.partial[k][w];
  }
  return before + inclusive - v;
}

// The logits of one row as the filters see them: with the repetition penalty applied to the
// tokens present in the slot (presence null: no penalty).
struct RowValues {
  const float* logits;
  const uint8_t* presence;
  float penalty;
  int64_t vocab;
  __device__ float operator()(int64_t i) const {
    const float l = logits[i];
    return (presence != nullptr && presence[i] != 0) ? sampling::penalized(l, penalty) : l;
  }
};

// Largest key and, among equal keys, the lowest id. Every thread gets the answer.
__device__ void block_argmax(const RowValues& values, Shared& sh, uint32_t& best_key, int32_t& best_id) {
  uint32_t key = 0;
  int32_t id = INT32_MAX;
  for (int64_t i = threadIdx.x; i < values.vocab; i += blockDim.x) {
    const uint32_t k = logit_key(values(i));
    if (k > key || (k == key && int32_t(i) < id)) {
      key = k;
      id = int32_t(i);
    }
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    const uint32_t k = __shfl_xor_sync(0xffffffffu, key, offset);
    const int32_t j = __shfl_xor_sync(0xffffffffu, id, offset);
    if (k > key || (k == key && j < id)) {
      key = k;
      id = j;
    }
  }
  __syncthreads();
  if (lane_id() == 0) {
    sh.best_key[warp_id()] = key;
    sh.best_id[warp_id()] = id;
  }
  __syncthreads();
  key = sh.best_key[0];
  id = sh.best_id[0];
  for (int w = 1; w < warp_count(); ++w)
    if (sh.best_key[w] > key || (sh.best_key[w] == key && sh.best_id[w] < id)) {
      key = sh.best_key[w];
      id = sh.best_id[w];
    }
  best_key = key;
  best_id = id;
}

// The Row of sampling::find_cut: each question is one pass over the row and one block sum.
struct BlockRow {
  RowValues values;
  Weigher weigher;
  Shared& sh;

  __device__ void count_ge(const uint32_t c[3], uint64_t n[3]) {
    uint64_t acc[3] = {0, 0, 0};
    for (int64_t i = threadIdx.x; i < values.vocab; i += blockDim.x) {
      const uint32_t key = logit_key(values(i));
      for (int j = 0; j < 3; ++j) acc[j] += key >= c[j] ? 1u : 0u;
    }
    block_sum(acc, sh);
    for (int j = 0; j < 3; ++j) n[j] = acc[j];
  }

  __device__ void mass_ge(const uint32_t c[3], uint32_t floor_key, uint64_t m[3]) {
    uint64_t acc[3] = {0, 0, 0};
    for (int64_t i = threadIdx.x; i < values.vocab; i += blockDim.x) {
      const float v = values(i);
      const uint32_t key = logit_key(v);
      if (key <= floor_key || key < c[0]) continue;  // c[0] < c[1] < c[2]: weighs nothing
      const uint64_t w = weigher.weight(v);
      for (int j = 0; j < 3; ++j) acc[j] += key >= c[j] ? w : 0u;
    }
    block_sum(acc, sh);
    for (int j = 0; j < 3; ++j) m[j] = acc[j];
  }

  __device__ LevelStats stats_at(uint32_t t) {
    uint64_t acc[3] = {0, 0, 0};  // count_gt, mass_gt, count_eq
    for (int64_t i = threadIdx.x; i < values.vocab; i += blockDim.x) {
      const float v = values(i);
      const uint32_t key = logit_key(v);
      if (key > t) {
        acc[0] += 1;
        acc[1] += weigher.weight(v);
      } else if (key == t) {
        acc[2] += 1;
      }
    }
    block_sum(acc, sh);
    LevelStats s;
    s.count_gt = acc[0];
    s.mass_gt = acc[1];
    s.count_eq = acc[2];
    return s;
  }
};

// Whether token i is kept; `tie_rank` counts the tokens at the cut's key met so far in id order.
__device__ __forceinline__ bool keep_token(const RowValues& values, const Weigher& weigher, const Cut& cut, int64_t i,
                                           uint64_t& tie_rank, uint64_t& weight) {
  const float v = values(i);
  const uint32_t key = logit_key(v);
  const bool kept = sampling::is_kept(key, tie_rank, cut, weigher.passes_min_p(v));
  if (key == cut.key) ++tie_rank;
  weight = kept ? weigher.weight(v) : 0;
  return kept;
}

// Inverse-CDF draw over the kept tokens in id order. Thread t owns the ids
// [t·chunk, (t + 1)·chunk); a scan of the tie counts gives each chunk its tokens' tie ranks, a scan
// of the kept masses its share of the total, and the thread whose share holds the target walks
// its chunk. With `kept_row`, every thread also writes its chunk's kept mask.
__device__ int32_t draw_token(const RowValues& values, const Weigher& weigher, const Cut& cut, double u,
                              int32_t fallback, uint8_t* kept_row, Shared& sh) {
  const int64_t vocab = values.vocab;
  const int64_t chunk = (vocab + blockDim.x - 1) / blockDim.x;
  const int64_t start = int64_t(threadIdx.x) * chunk;
  const int64_t begin = start < vocab ? start : vocab;
  const int64_t end = begin + chunk < vocab ? begin + chunk : vocab;

  uint64_t above_mass = 0, n_ties = 0;
  for (int64_t i = begin; i < end; ++i) {
    const float v = values(i);
    const uint32_t key = logit_key(v);
    if (key > cut.key) {
      if (weigher.passes_min_p(v)) above_mass += weigher.weight(v);
    } else if (key == cut.key) {
      ++n_ties;
    }
  }
  uint64_t ties_total = 0;
  const uint64_t ties_before = block_exclusive_scan(n_ties, sh, 0, ties_total);
  // The tokens at the cut's key share one logit, hence one weight and one min-p verdict.
  const float cut_logit = key_logit(cut.key);
  const uint64_t tie_weight = weigher.passes_min_p(cut_logit) ? weigher.weight(cut_logit) : 0;
  const uint64_t ties_left = cut.ties > ties_before ? cut.ties - ties_before : 0;
  const uint64_t my_ties = ties_left < n_ties ? ties_left : n_ties;
  const uint64_t my_mass = above_mass + my_ties * tie_weight;
  uint64_t total = 0;
  const uint64_t mass_before = block_exclusive_scan(my_mass, sh, 1, total);

  if (kept_row != nullptr) {
    uint64_t rank = ties_before, w = 0;
    for (int64_t i = begin; i < end; ++i) kept_row[i] = keep_token(values, weigher, cut, i, rank, w) ? 1 : 0;
  }
  if (threadIdx.x == 0) sh.choice = fallback;
  __syncthreads();
  if (total > 0) {
    uint64_t target = uint64_t(u * double(total));
    if (target >= total) target = total - 1;
    if (mass_before <= target && target < mass_before + my_mass) {  // exactly one thread
      uint64_t acc = mass_before, rank = ties_before, w = 0;
      for (int64_t i = begin; i < end; ++i) {
        if (!keep_token(values, weigher, cut, i, rank, w)) continue;
        acc += w;
        if (acc > target) {
          sh.choice = int32_t(i);
          break;
        }
      }
    }
  }
  __syncthreads();
  return sh.choice;
}

// log p(id) under softmax of the raw logits: fixed-point weights relative to the raw maximum.
__device__ float raw_logprob(const float* logits, int64_t vocab, int32_t id, double scale, Shared& sh) {
  const RowValues raw{logits, nullptr, 1.0f, vocab};
  uint32_t max_key = 0;
  int32_t max_id = 0;
  block_argmax(raw, sh, max_key, max_id);
  const float max_logit = key_logit(max_key);
  const Weigher weigher{max_logit, 1.0, scale, false, 0.0};
  uint64_t sum[1] = {0};
  for (int64_t i = threadIdx.x; i < vocab; i += blockDim.x) sum[0] += weigher.weight(raw(i));
  block_sum(sum, sh);
  return float(double(logits[id]) - double(max_logit) - log(double(sum[0]) / scale));
}

// Clears (on restart) and marks the slot's presence row; the block sees the marks afterwards.
__device__ void record_tokens(uint8_t* presence, const SampleRow& row, const int32_t* tokens, int64_t vocab) {
  if (presence == nullptr) return;
  if (row.restart != 0)
    for (int64_t i = threadIdx.x; i < vocab; i += blockDim.x) presence[i] = 0;
  __syncthreads();  // clears before marks (another thread may mark the same byte)
  for (int64_t t = threadIdx.x; t < row.n_tokens; t += blockDim.x) {
    const int32_t id = tokens[int64_t(row.token_begin) + t];
    if (id >= 0 && id < vocab) presence[id] = 1;
  }
  __syncthreads();
}

__global__ void __launch_bounds__(kMaxThreads) sample_kernel(KernelArgs a) {
  __shared__ Shared sh;
  const Rule& rule = a.rule;
  const uint32_t minus_inf_key = logit_key(-INFINITY), plus_inf_key = logit_key(INFINITY);
  for (int64_t r = blockIdx.x; r < a.n_rows; r += gridDim.x) {
    const SampleRow row = a.rows[r];
    uint8_t* presence = (a.presence != nullptr && row.slot >= 0 && row.slot < a.n_slots)
                            ? a.presence + int64_t(row.slot) * a.vocab
                            : nullptr;
    record_tokens(presence, row, a.tokens, a.vocab);
    if (row.wanted != 0) {
      const float* logits = a.logits + r * a.ld;
      uint8_t* kept_row = a.kept != nullptr ? a.kept + r * a.vocab : nullptr;
      const RowValues values{logits, rule.repetition_penalty != 1.0f ? presence : nullptr, rule.repetition_penalty,
                             a.vocab};
      uint32_t max_key = 0;
      int32_t chosen = 0;
      block_argmax(values, sh, max_key, chosen);
      // Drawn only with a finite maximum; top_k = 1 keeps just the argmax.
      const bool drawn = !rule.greedy && rule.top_k != 1 && max_key > minus_inf_key && max_key < plus_inf_key;
      if (drawn) {
        const Weigher weigher{key_logit(max_key), rule.inv_temperature, rule.mass_scale, rule.use_min_p,
                              rule.log_min_p};
        BlockRow block_row{values, weigher, sh};
        const Cut cut = sampling::find_cut(block_row, rule, weigher);
        const double u = sampling::philox_uniform(a.seed, row.stream, row.draw);
        chosen = draw_token(values, weigher, cut, u, chosen, kept_row, sh);
      } else if (kept_row != nullptr) {
        for (int64_t i = threadIdx.x; i < a.vocab; i += blockDim.x) kept_row[i] = i == chosen ? 1 : 0;
      }
      const float logprob = a.logprobs ? raw_logprob(logits, a.vocab, chosen, rule.mass_scale, sh) : 0.0f;
      if (threadIdx.x == 0) a.out[r] = SampleResult{chosen, logprob};
    } else if (threadIdx.x == 0) {
      a.out[r] = SampleResult{};
    }
    __syncthreads();  // the next row reuses the shared memory
  }
}

__global__ void curand_words_kernel(uint64_t seed, uint64_t subsequence, uint64_t offset, int64_t count,
                                    uint32_t* out) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  curandStatePhilox4_32_10_t state;
  curand_init(seed, subsequence, offset, &state);
  for (int64_t i = 0; i < count; ++i) out[i] = curand(&state);
}

[[noreturn]] void bad_param(const std::string& what) {
  kernel_fail(KernelFault::kInvalidArgument, "CUDA sample_rows: " + what);
}

void check_params(const SampleParams& p) {
  if (!(p.temperature >= 0.0f) || !std::isfinite(p.temperature))
    bad_param("temperature must be a finite value >= 0, got " + std::to_string(p.temperature));
  if (p.top_k < 0) bad_param("top_k must be >= 0, got " + std::to_string(p.top_k));
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) bad_param("top_p must be in (0, 1], got " + std::to_string(p.top_p));
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f)) bad_param("min_p must be in [0, 1], got " + std::to_string(p.min_p));
  if (!(p.repetition_penalty > 0.0f) || !std::isfinite(p.repetition_penalty))
    bad_param("repetition_penalty must be a finite value > 0, got " + std::to_string(p.repetition_penalty));
}

}  // namespace

void sample_rows(CudaContext& ctx, const float* logits, int64_t ld, int64_t n_rows, int64_t vocab,
                 const SampleRow* rows, const int32_t* tokens, uint8_t* presence, int64_t n_slots,
                 const SampleParams& params, SampleResult* out, uint8_t* kept) {
  check_params(params);
  if (n_rows <= 0) return;
  if (vocab < 1 || vocab > int64_t(INT32_MAX)) bad_param("vocab must be in [1, 2^31), got " + std::to_string(vocab));
  if (ld < vocab) bad_param("row stride " + std::to_string(ld) + " is below vocab " + std::to_string(vocab));
  if (!logits || !rows || !out) bad_param("logits, rows and out must not be null");
  KernelArgs a{logits,
               ld,
               n_rows,
               vocab,
               rows,
               tokens,
               presence,
               presence ? n_slots : 0,
               sampling::make_rule(vocab, params.temperature, params.top_k, params.top_p, params.min_p,
                                   params.repetition_penalty),
               params.seed,
               params.logprobs,
               out,
               kept};
  // Vocabulary-sized rows get the full block; tiny test vocabularies a few warps.
  const int threads = vocab >= 8192 ? kMaxThreads : 128;
  sample_kernel<<<grid_for(n_rows, 1), threads, 0, ctx.stream>>>(a);
  check_launch("sample_rows");
}

void curand_philox_words(CudaContext& ctx, uint64_t seed, uint64_t subsequence, uint64_t offset, int64_t count,
                         uint32_t* out) {
  if (count <= 0) return;
  curand_words_kernel<<<1, 32, 0, ctx.stream>>>(seed, subsequence, offset, count, out);
  check_launch("curand_philox_words");
}

}  // namespace eagerlm::cuda
