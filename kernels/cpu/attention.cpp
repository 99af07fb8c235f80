// attention: causal attention of each new token over its sequence's cached keys and values, for
// every (sequence, head) pair of a step in one call. Each query walks its keys in blocks of
// kAttentionBlock positions with an online softmax (a running maximum and sum; the accumulated
// output is rescaled when the maximum grows), so no score matrix is materialised and no cache cell
// at or past the query's own position is read.
//
// Work items are (sequence, head, new token) triples, scheduled dynamically over the OpenMP
// threads: decode steps spread over heads and sequences, prefill steps also over query rows.
// d_head = 64 (every GPT-2 size) has an AVX-512 path that keeps the output accumulator in
// registers and sums 16 dot products at once; other sizes use portable vectorised loops.
//
// The cache holds F32, BF16 or F16 (layout.dtype); the kernel is written once over the element
// type C, widening keys and values as they are read (weight_vectors.h's loads: the same
// instructions the typed weight kernels use). The AVX-512 path widens in registers; the portable
// one widens each key or value row into a d_head-float scratch first, so its arithmetic is that
// of the F32 path on the widened values.
//
// Batch invariance: a query's output depends only on its own query, its keys and values and
// their count: every sum (dot products, the softmax sums, the weighted values) is written as
// explicit vectors in a fixed order (weight_vectors.h) rather than left to auto-vectorized
// reductions, whose peeling would follow the address of the cache slot or of the scratch; and
// which thread runs an item, or what else is in the step, changes nothing.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernels/common/dtype.h"
#include "kernels/common/weights.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/vec_exp.h"

#include "kernels/cpu/isa_begin.h"

#include "kernels/cpu/weight_vectors.h"

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

namespace {

using simd::kLanes;
using simd::Storage;
using simd::VecF;
constexpr WeightType kF32 = WeightType::kF32;

// The row of d values at p as floats: p itself for F32, else widened into `scratch`.
template <WeightType C>
const float* widened_row(const Storage<C>* p, int64_t d, float* scratch) {
  if constexpr (C == WeightType::kF32) {
    (void)d;
    (void)scratch;
    return p;
  } else {
    int64_t c = 0;
    for (; c + simd::kLanes <= d; c += simd::kLanes) simd::store(scratch + c, simd::load<C>(p + c), simd::kLanes);
    if (c < d) simd::store(scratch + c, simd::load_partial<C>(p + c, int(d - c)), int(d - c));
    return scratch;
  }
}

// Multiply-adds (Σ heads·new tokens·keys·d_head) below which the step runs on one thread.
constexpr int64_t kParallelWork = 65536;

// The online-softmax step for one block: turns its raw scores into weights exp(s - new_max) in
// place, folds their sum into running_sum, and returns the factor exp(old_max - new_max) by which
// the output accumulated so far must be rescaled (0 on the first block, where old_max = -inf).
float softmax_block(float* scores, int64_t count, float& running_max, float& running_sum) {
  float block_max = running_max;
  // Written as a comparison: GCC 12 does not vectorise a std::max reduction.
#pragma omp simd reduction(max : block_max)
  for (int64_t j = 0; j < count; ++j) block_max = scores[j] > block_max ? scores[j] : block_max;
  const float correction = detail::vec_exp(running_max - block_max);
#pragma omp simd
  for (int64_t j = 0; j < count; ++j) scores[j] = detail::vec_exp(scores[j] - block_max);
  const float block_sum = simd::sum(scores, count);  // simd::sum's fixed order
  running_max = block_max;
  running_sum = running_sum * correction + block_sum;
  return correction;
}

// acc[c] = acc[c]·factor (scale) or acc[c] + weight·v[c] (axpy) for c < d, vector by vector, the
// last one partial: every element's arithmetic is the same wherever it falls.
void scale_vector(float* acc, int64_t d, float factor) {
  const VecF f = simd::splat(factor);
  int64_t c = 0;
  for (; c + kLanes <= d; c += kLanes) simd::store(acc + c, simd::load<kF32>(acc + c) * f, kLanes);
  if (c < d) simd::store(acc + c, simd::load_partial<kF32>(acc + c, int(d - c)) * f, int(d - c));
}

void axpy(float* acc, int64_t d, float weight, const float* v) {
  const VecF w = simd::splat(weight);
  int64_t c = 0;
  for (; c + kLanes <= d; c += kLanes)
    simd::store(acc + c, simd::fma(w, simd::load<kF32>(v + c), simd::load<kF32>(acc + c)), kLanes);
  if (c < d) {
    const int rest = int(d - c);
    simd::store(acc + c, simd::fma(w, simd::load_partial<kF32>(v + c, rest), simd::load_partial<kF32>(acc + c, rest)),
                rest);
  }
}

// Prefetches one cache row of `bytes` (a key or value of d_head elements). Every key block
// prefetches, as it scores each key, that key's value (read right after the scores) and the key a
// block ahead: a decode step's (sequence, head) items are a few kAttentionBlock-key streams each,
// too short for the hardware prefetchers to run ahead of (8 sequences of 330 positions, 12 layers,
// bf16 cache from memory on a Zen 5, medians of 5: 2.54 ms against 2.27 with these prefetches;
// the avx2 variant's portable path 4.18 against 3.46). A prefetch past the sequence's length
// reads nothing into the arithmetic: the masking above still holds.
inline void prefetch_row(const void* row, size_t bytes) {
  for (size_t line = 0; line < bytes; line += 64) __builtin_prefetch(static_cast<const char*>(row) + line);
}

// Portable path: one query against keys/values [0, n_keys) of one (slot, head) matrix.
// q_scaled, acc and row are d floats of thread-private scratch each.
template <WeightType C>
void attend_query(const float* __restrict q, const Storage<C>* __restrict keys, const Storage<C>* __restrict values,
                  int64_t pos_stride, int64_t n_keys, int64_t d, float scale, float* __restrict q_scaled,
                  float* __restrict acc, float* __restrict row, float* __restrict out) {
  for (int64_t c = 0; c < d; ++c) {
    q_scaled[c] = q[c] * scale;
    acc[c] = 0.0f;
  }
  float running_max = -std::numeric_limits<float>::infinity();
  float running_sum = 0.0f;
  alignas(64) float scores[kAttentionBlock];
  for (int64_t start = 0; start < n_keys; start += kAttentionBlock) {
    // The last block is short: positions past n_keys are masked by never being visited.
    const int64_t count = std::min<int64_t>(kAttentionBlock, n_keys - start);
    const Storage<C>* block_keys = keys + start * pos_stride;
    const Storage<C>* block_values = values + start * pos_stride;
    for (int64_t j = 0; j < count; ++j) {
      prefetch_row(block_values + j * pos_stride, size_t(d) * sizeof(Storage<C>));
      prefetch_row(block_keys + (j + kAttentionBlock) * pos_stride, size_t(d) * sizeof(Storage<C>));
      scores[j] = simd::dot(q_scaled, widened_row<C>(block_keys + j * pos_stride, d, row), d);
    }
    const float correction = softmax_block(scores, count, running_max, running_sum);
    if (correction != 1.0f) scale_vector(acc, d, correction);
    for (int64_t j = 0; j < count; ++j) axpy(acc, d, scores[j], widened_row<C>(block_values + j * pos_stride, d, row));
  }
  // running_sum >= 1: the maximum's own term is exp(0).
  const float inv_sum = 1.0f / running_sum;
  for (int64_t c = 0; c < d; ++c) out[c] = acc[c] * inv_sum;
}

#if defined(EAGERLM_CPU_HAS_AVX512)

// _mm512_shuffle_f32x4 and _mm512_permutexvar_ps pass an "undefined" vector as the masked-off
// source, which GCC 12 reports as maybe-uninitialized; the full-mask forms below are the same
// instructions without it.
template <int kImm>
__m512 shuffle_quarters(__m512 a, __m512 b) {
  return _mm512_mask_shuffle_f32x4(a, 0xFFFF, a, b, kImm);
}

// Lane k of the result is the sum of the 16 lanes of p[k]: a transposing reduction tree (four
// rounds of shuffle pairs and adds, then one permute) instead of 16 separate horizontal sums.
__m512 sum_lanes_16(const __m512 (&p)[16]) {
  __m512 r[8];  // r[i]: 128-bit quarters 0-1 hold partial sums of p[2i], 2-3 of p[2i+1]
  for (int i = 0; i < 8; ++i) {
    r[i] =
        _mm512_add_ps(shuffle_quarters<0x44>(p[2 * i], p[2 * i + 1]), shuffle_quarters<0xEE>(p[2 * i], p[2 * i + 1]));
  }
  __m512 s[4];  // s[i]: quarter t holds 4 partial sums of p[4i + t]
  for (int i = 0; i < 4; ++i) {
    s[i] =
        _mm512_add_ps(shuffle_quarters<0x88>(r[2 * i], r[2 * i + 1]), shuffle_quarters<0xDD>(r[2 * i], r[2 * i + 1]));
  }
  __m512 t[2];  // t[i]: quarter l holds 2 partials of p[8i + l], then 2 of p[8i + 4 + l]
  for (int i = 0; i < 2; ++i) {
    t[i] =
        _mm512_add_ps(_mm512_shuffle_ps(s[2 * i], s[2 * i + 1], 0x88), _mm512_shuffle_ps(s[2 * i], s[2 * i + 1], 0xDD));
  }
  // Quarter l now holds the sums of p[l], p[4 + l], p[8 + l], p[12 + l]: transpose 4×4.
  const __m512 u = _mm512_add_ps(_mm512_shuffle_ps(t[0], t[1], 0x88), _mm512_shuffle_ps(t[0], t[1], 0xDD));
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return _mm512_mask_permutexvar_ps(u, 0xFFFF, order, u);
}

// attend_query for d_head = 64: the scaled query and the output accumulator live in registers
// (4 vectors each; two accumulator sets, even and odd keys, halve the FMA dependency chains).
template <WeightType C>
void attend_query_d64(const float* q, const Storage<C>* keys, const Storage<C>* values, int64_t pos_stride,
                      int64_t n_keys, float scale, float* out) {
  const __m512 scale_v = _mm512_set1_ps(scale);
  __m512 qv[4], acc_even[4], acc_odd[4];
  for (int c = 0; c < 4; ++c) {
    qv[c] = _mm512_mul_ps(_mm512_loadu_ps(q + 16 * c), scale_v);
    acc_even[c] = _mm512_setzero_ps();
    acc_odd[c] = _mm512_setzero_ps();
  }
  float running_max = -std::numeric_limits<float>::infinity();
  float running_sum = 0.0f;
  alignas(64) float scores[kAttentionBlock];
  for (int64_t start = 0; start < n_keys; start += kAttentionBlock) {
    const int64_t count = std::min<int64_t>(kAttentionBlock, n_keys - start);
    const Storage<C>* block_keys = keys + start * pos_stride;
    const Storage<C>* block_values = values + start * pos_stride;

    // Scores, 16 keys at a time; lanes past count are zero products and never read from memory.
    for (int64_t group = 0; group < count; group += 16) {
      __m512 products[16];
      for (int64_t t = 0; t < 16; ++t) {
        if (group + t < count) {
          const Storage<C>* key = block_keys + (group + t) * pos_stride;
          prefetch_row(block_values + (group + t) * pos_stride, 64 * sizeof(Storage<C>));
          prefetch_row(key + kAttentionBlock * pos_stride, 64 * sizeof(Storage<C>));
          __m512 p = _mm512_mul_ps(qv[0], simd::load<C>(key));
          p = _mm512_fmadd_ps(qv[1], simd::load<C>(key + 16), p);
          p = _mm512_fmadd_ps(qv[2], simd::load<C>(key + 32), p);
          products[t] = _mm512_fmadd_ps(qv[3], simd::load<C>(key + 48), p);
        } else {
          products[t] = _mm512_setzero_ps();
        }
      }
      _mm512_store_ps(scores + group, sum_lanes_16(products));
    }

    const float correction = softmax_block(scores, count, running_max, running_sum);
    if (correction != 1.0f) {
      const __m512 factor = _mm512_set1_ps(correction);
      for (int c = 0; c < 4; ++c) {
        acc_even[c] = _mm512_mul_ps(acc_even[c], factor);
        acc_odd[c] = _mm512_mul_ps(acc_odd[c], factor);
      }
    }

    int64_t j = 0;
    for (; j + 1 < count; j += 2) {
      const Storage<C>* v0 = block_values + j * pos_stride;
      const Storage<C>* v1 = v0 + pos_stride;
      const __m512 w0 = _mm512_set1_ps(scores[j]);
      const __m512 w1 = _mm512_set1_ps(scores[j + 1]);
      for (int c = 0; c < 4; ++c) {
        acc_even[c] = _mm512_fmadd_ps(w0, simd::load<C>(v0 + 16 * c), acc_even[c]);
        acc_odd[c] = _mm512_fmadd_ps(w1, simd::load<C>(v1 + 16 * c), acc_odd[c]);
      }
    }
    if (j < count) {
      const Storage<C>* v0 = block_values + j * pos_stride;
      const __m512 w0 = _mm512_set1_ps(scores[j]);
      for (int c = 0; c < 4; ++c) {
        acc_even[c] = _mm512_fmadd_ps(w0, simd::load<C>(v0 + 16 * c), acc_even[c]);
      }
    }
  }
  const __m512 inv_sum = _mm512_set1_ps(1.0f / running_sum);  // running_sum >= 1
  for (int c = 0; c < 4; ++c) {
    _mm512_storeu_ps(out + 16 * c, _mm512_mul_ps(_mm512_add_ps(acc_even[c], acc_odd[c]), inv_sum));
  }
}

#endif  // EAGERLM_CPU_HAS_AVX512

template <WeightType C>
void attention_of(const float* qkv, int64_t ld_qkv, const StepBatch& batch, const KvLayout& layout,
                  const Storage<C>* k_cache, const Storage<C>* v_cache, float scale, float* out, int64_t ld_out) {
  const int64_t n_head = layout.n_head;
  const int64_t d_head = layout.d_head;
  if (batch.n_seq <= 0 || n_head <= 0 || d_head <= 0) return;

  // items_before[s]: work items of the sequences before s; sequence s owns n_head·n_new[s] items,
  // ordered head-major so a thread's consecutive items share a key/value matrix.
  std::vector<int64_t> items_before(static_cast<size_t>(batch.n_seq) + 1, 0);
  int64_t work = 0;
  for (int32_t s = 0; s < batch.n_seq; ++s) {
    const int64_t n_new = batch.n_new[s];
    items_before[s + 1] = items_before[s] + n_head * n_new;
    work += n_head * n_new * (batch.past_len[s] + n_new) * d_head;
  }
  const int64_t n_items = items_before.back();

  // One work item: new token i of sequence s, one head. scratch: 3·d_head floats (portable path).
  auto attend_item = [&](int64_t item, float* scratch) {
    // upper_bound skips sequences without new tokens (their items_before entries repeat).
    const auto s = static_cast<int32_t>(std::upper_bound(items_before.begin(), items_before.end(), item) -
                                        items_before.begin() - 1);
    const int64_t local = item - items_before[s];
    const int64_t n_new = batch.n_new[s];
    const int64_t head = local / n_new;
    const int64_t i = local % n_new;
    const int64_t row = batch.row_start[s] + i;
    const int64_t cache_offset = static_cast<int64_t>(batch.slot[s]) * layout.slot_stride + head * layout.head_stride;
    const float* q = qkv + row * ld_qkv + head * d_head;
    const int64_t n_keys = batch.past_len[s] + i + 1;
    float* o = out + row * ld_out + head * d_head;
#if defined(EAGERLM_CPU_HAS_AVX512)
    if (d_head == 64) {
      attend_query_d64<C>(q, k_cache + cache_offset, v_cache + cache_offset, layout.pos_stride, n_keys, scale, o);
      return;
    }
#endif
    attend_query<C>(q, k_cache + cache_offset, v_cache + cache_offset, layout.pos_stride, n_keys, d_head, scale,
                    scratch, scratch + d_head, scratch + 2 * d_head, o);
  };

  // Scratch per thread, kept between calls (the d_head = 64 path needs none).
  const auto scratch_size = static_cast<size_t>(3 * d_head);
  auto attend = [&](int64_t item) {
    thread_local std::vector<float> scratch;
    if (scratch.size() < scratch_size) scratch.resize(scratch_size);
    attend_item(item, scratch.data());
  };
  if (work <= kParallelWork) {
    // Small steps stay on the calling thread (handing work out costs more than they do).
    for (int64_t item = 0; item < n_items; ++item) attend(item);
    return;
  }
  // The pool hands items out one at a time, so threads balance items of different lengths.
  parallel_for(n_items, attend);
}

}  // namespace

void attention(const float* qkv, int64_t ld_qkv, const StepBatch& batch, const KvLayout& layout, const void* k_cache,
               const void* v_cache, float scale, float* out, int64_t ld_out) {
  switch (layout.dtype) {
    case DType::kBF16:
      return attention_of<WeightType::kBF16>(qkv, ld_qkv, batch, layout, static_cast<const uint16_t*>(k_cache),
                                             static_cast<const uint16_t*>(v_cache), scale, out, ld_out);
    case DType::kF16:
      return attention_of<WeightType::kF16>(qkv, ld_qkv, batch, layout, static_cast<const uint16_t*>(k_cache),
                                            static_cast<const uint16_t*>(v_cache), scale, out, ld_out);
    default:
      return attention_of<WeightType::kF32>(qkv, ld_qkv, batch, layout, static_cast<const float*>(k_cache),
                                            static_cast<const float*>(v_cache), scale, out, ld_out);
  }
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA

#include "kernels/cpu/isa_end.h"
