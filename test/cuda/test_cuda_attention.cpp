// The CUDA KV-cache kernels (kv_append, attention) against their CPU twins, on ragged batches:
// decode (one new token after a long past, up to max_len), prefill from position 0, mixed steps,
// a non-identity slot mapping, unused slots, rows not in sequence order, key counts at tile
// boundaries (63, 64, 65, 128), GPT-2's d_head = 64 and odd ones (24, 33, and 160, more than a
// block's threads). Every cache cell past each sequence's length holds NaN, so a read the kernel
// must not make shows up as a non-finite output; the padding of out's rows holds a sentinel.
// Attention runs with the key range split into chunks of 64, 128 and 192 positions (the
// split-and-combine path), unsplit, and with the automatic plan. A second test feeds zero queries
// (uniform weights) and position/slot/head-coded values, so each output is an exactly known mean
// that checks every row's causal limit and the cache addressing without the CPU. The first test
// runs again over bf16 and f16 caches.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/common/dtype.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cuda/attention_split.h"
#include "kernels/cuda/cuda_ops.h"
#include "test/cuda/cuda_test_util.h"

namespace cpu = eagerlm::cpu;
namespace cuda = eagerlm::cuda;
using eagerlm::KvLayout;
using eagerlm::StepBatch;
using namespace eagerlm::cuda_test;

namespace {

constexpr float kSentinel = -4321.0f;
// Chunk lengths for attention_chunked; 0 stands for the public cuda::attention (automatic plan).
const int64_t kChunkChoices[] = {64, 128, 192, int64_t(1) << 30, 0};

struct Seq {
  int32_t slot, past, n_new;
};

struct Case {
  const char* name;
  int64_t n_slots, max_len, n_head, d_head;
  std::vector<Seq> seqs;
  bool reverse_rows;  // rows of the last sequence first
  float q_range;      // larger queries make the softmax peaky and the rescaling matter
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"decode, ragged, one at max_len",
       6,
       200,
       3,
       24,
       {{3, 62, 1}, {0, 199, 1}, {4, 63, 1}, {1, 64, 1}, {5, 127, 1}, {2, 130, 1}},
       false,
       1.0f},
      {"prefill and decode mixed, reaching max_len", 4, 256, 2, 64, {{1, 0, 70}, {0, 5, 3}, {3, 250, 6}}, true, 1.0f},
      {"gpt2-small decode over a long past", 3, 1024, 12, 64, {{2, 1000, 1}, {0, 1023, 1}}, false, 1.0f},
      {"full-length prefill, odd d_head", 2, 97, 5, 33, {{1, 0, 97}}, false, 1.0f},
      {"d_head wider than a block", 2, 130, 1, 160, {{1, 10, 5}, {0, 0, 1}}, true, 1.0f},
      {"peaky softmax", 3, 300, 4, 64, {{0, 100, 4}, {2, 0, 65}, {1, 299, 1}}, false, 6.0f},
  };
  return all;
}

// A batch on the host (for the CPU kernels) and the same arrays on the device.
struct Batch {
  std::vector<int32_t> slot, row_start, n_new, past_len;
  int32_t n_rows = 0;
  StepBatch host() const {
    return {int32_t(slot.size()), n_rows, slot.data(), row_start.data(), n_new.data(), past_len.data()};
  }
};

Batch make_batch(const Case& c) {
  Batch b;
  const size_t n = c.seqs.size();
  for (const Seq& s : c.seqs) {
    b.slot.push_back(s.slot);
    b.n_new.push_back(s.n_new);
    b.past_len.push_back(s.past);
  }
  b.row_start.assign(n, 0);
  int32_t next = 0;
  for (size_t k = 0; k < n; ++k) {
    const size_t s = c.reverse_rows ? n - 1 - k : k;
    b.row_start[s] = next;
    next += b.n_new[s];
  }
  b.n_rows = next;
  return b;
}

struct DeviceBatch {
  DeviceBuffer<int32_t> slot, row_start, n_new, past_len;
  int32_t n_seq, n_rows;
  explicit DeviceBatch(const Batch& b)
      : slot(b.slot),
        row_start(b.row_start),
        n_new(b.n_new),
        past_len(b.past_len),
        n_seq(int32_t(b.slot.size())),
        n_rows(b.n_rows) {}
  StepBatch get() const { return {n_seq, n_rows, slot.get(), row_start.get(), n_new.get(), past_len.get()}; }
};

// Tolerance per output row and head (u = 2^-24, L keys, B = ⌈L/64⌉ tiles, d = d_head):
//   scores: float dot products of d terms of the pre-scaled query, off by
//           <= Δ = (d + 1)·u·scale·max_j Σ_c |q_c·k_jc| each;
//   weights: exp(s_j − m) carries Δ, the rounding of s_j − m (<= R·u, R the score range), exp's
//           2u, and the running-max rescales (R·u in all, plus 4u per rescale; the CPU rescales
//           once per tile, the GPU once per tile and once per chunk in the combine, <= 2B):
//           relative error η <= Δ + 2R·u + (8B + 3)·u;
//   a relative error η on every weight moves the normalized average by <= 2η·V, V = max|v|;
//   summing L terms of Σp·v and of Σp costs <= L·u·V each, the normalization 2u·V.
// Per kernel V·(2η + (2L + 4)·u); the two kernels differ by at most twice that.
std::vector<double> attention_bound(const std::vector<float>& qkv, int64_t ld_qkv, const Batch& batch,
                                    const KvLayout& layout, const std::vector<float>& k_cache,
                                    const std::vector<float>& v_cache, double scale, int64_t ld_out) {
  const double u = kU;
  const int64_t d = layout.d_head;
  std::vector<double> bound(size_t(batch.n_rows * ld_out), 0.0);  // padding: identical
  for (size_t s = 0; s < batch.slot.size(); ++s) {
    for (int64_t h = 0; h < layout.n_head; ++h) {
      const int64_t base = batch.slot[s] * layout.slot_stride + h * layout.head_stride;
      for (int64_t i = 0; i < batch.n_new[s]; ++i) {
        const int64_t row = batch.row_start[s] + i;
        const int64_t n_keys = batch.past_len[s] + i + 1;
        double max_abs_dot = 0.0, v_max = 0.0, s_min = INFINITY, s_max = -INFINITY;
        for (int64_t j = 0; j < n_keys; ++j) {
          double abs_dot = 0.0, dot = 0.0;
          for (int64_t c = 0; c < d; ++c) {
            const double q = qkv[size_t(row * ld_qkv + h * d + c)];
            const double k = k_cache[size_t(base + j * layout.pos_stride + c)];
            abs_dot += std::abs(q * k);
            dot += q * k;
            v_max = std::max(v_max, std::abs(double(v_cache[size_t(base + j * layout.pos_stride + c)])));
          }
          max_abs_dot = std::max(max_abs_dot, abs_dot);
          s_min = std::min(s_min, scale * dot);
          s_max = std::max(s_max, scale * dot);
        }
        const double tiles = std::ceil(double(n_keys) / double(cuda::kAttentionTile));
        const double eta =
            double(d + 1) * u * scale * max_abs_dot + 2.0 * (s_max - s_min) * u + (8.0 * tiles + 3.0) * u;
        const double b = 2.0 * v_max * (2.0 * eta + double(2 * n_keys + 4) * u);
        for (int64_t c = 0; c < d; ++c) bound[size_t(row * ld_out + h * d + c)] = b;
      }
    }
  }
  return bound;
}

// The cache with every cell NaN except positions [0, past) of each sequence's slot.
std::vector<float> poisoned_cache(const Case& c, const KvLayout& layout, std::mt19937& rng) {
  std::vector<float> cache(size_t(c.n_slots * layout.slot_stride), kNaN);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const Seq& s : c.seqs)
    for (int64_t h = 0; h < c.n_head; ++h)
      for (int64_t p = 0; p < s.past; ++p)
        for (int64_t e = 0; e < c.d_head; ++e)
          cache[size_t(s.slot * layout.slot_stride + h * layout.head_stride + p * layout.pos_stride + e)] = dist(rng);
  return cache;
}

void run_attention(cuda::CudaContext& ctx, int64_t chunk, const float* qkv, int64_t ld_qkv, const StepBatch& batch,
                   const KvLayout& layout, const void* k, const void* v, float scale, float* out, int64_t ld_out) {
  if (chunk == 0)
    cuda::attention(ctx, qkv, ld_qkv, batch, layout, k, v, scale, out, ld_out);
  else
    cuda::attention_chunked(ctx, qkv, ld_qkv, batch, layout, k, v, scale, out, ld_out, chunk);
}

}  // namespace

TEST_CASE("cuda kv_append and attention match the cpu kernels", "[cuda][attention]") {
  auto ctx = make_context();
  auto rng = test_rng(201);
  for (const Case& c : cases()) {
    INFO("case: " << c.name);
    const KvLayout layout = eagerlm::kv_layout(c.max_len, c.n_head, c.d_head);
    const Batch batch = make_batch(c);
    const int64_t width = c.n_head * c.d_head;
    const int64_t n_rows = batch.n_rows;

    // kv_append reads qkv dense ([n_rows, 3·width]); attention gets a copy with padded rows.
    std::vector<float> qkv = random_floats(rng, size_t(n_rows * 3 * width), -1.0f, 1.0f);
    for (int64_t r = 0; r < n_rows; ++r)
      for (int64_t e = 0; e < width; ++e) qkv[size_t(r * 3 * width + e)] *= c.q_range;
    const int64_t ld_qkv = 3 * width + 3;
    std::vector<float> qkv_padded(size_t(n_rows * ld_qkv), kNaN);
    for (int64_t r = 0; r < n_rows; ++r)
      std::copy_n(qkv.begin() + r * 3 * width, 3 * width, qkv_padded.begin() + r * ld_qkv);
    const auto k0 = poisoned_cache(c, layout, rng);
    const auto v0 = poisoned_cache(c, layout, rng);
    const int64_t ld_out = width + 2;
    std::vector<float> out0(size_t(n_rows * ld_out), kSentinel);
    for (int64_t r = 0; r < n_rows; ++r) std::fill_n(out0.begin() + r * ld_out, width, kNaN);
    const float scale = 1.0f / std::sqrt(float(c.d_head));

    auto k_cpu = k0, v_cpu = v0, out_cpu = out0;
    const StepBatch host_batch = batch.host();
    cpu::kv_append(qkv.data(), host_batch, layout, k_cpu.data(), v_cpu.data());
    cpu::attention(qkv_padded.data(), ld_qkv, host_batch, layout, k_cpu.data(), v_cpu.data(), scale, out_cpu.data(),
                   ld_out);

    const DeviceBatch device_batch(batch);
    DeviceBuffer<float> dqkv(qkv), dqkv_padded(qkv_padded), dk(k0), dv(v0);
    cuda::kv_append(*ctx, dqkv.get(), device_batch.get(), layout, dk.get(), dv.get());
    cuda::synchronize(*ctx);
    {
      INFO("kv_append: key cache");
      check_identical(dk.download(), k_cpu);
    }
    {
      INFO("kv_append: value cache");
      check_identical(dv.download(), v_cpu);
    }

    const auto bound = attention_bound(qkv_padded, ld_qkv, batch, layout, k_cpu, v_cpu, scale, ld_out);
    for (const int64_t chunk : kChunkChoices) {
      INFO("chunk_len " << chunk << " (0: automatic plan)");
      DeviceBuffer<float> dout(out0);
      run_attention(*ctx, chunk, dqkv_padded.get(), ld_qkv, device_batch.get(), layout, dk.get(), dv.get(), scale,
                    dout.get(), ld_out);
      cuda::synchronize(*ctx);
      check_close(dout.download(), out_cpu, bound);
    }
  }
}

namespace {

std::vector<uint16_t> narrowed(const std::vector<float>& v, eagerlm::DType dtype) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = dtype == eagerlm::DType::kBF16 ? eagerlm::float_to_bf16(v[i]) : eagerlm::float_to_f16(v[i]);
  return out;
}

std::vector<float> widened(const std::vector<uint16_t>& v, eagerlm::DType dtype) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = dtype == eagerlm::DType::kBF16 ? eagerlm::bf16_to_float(v[i]) : eagerlm::f16_to_float(v[i]);
  return out;
}

}  // namespace

// 16-bit caches: kv_append rounds to nearest even on both sides (the same cache bits), and the
// attention kernels widen each element exactly, so the float32 bound above holds with the
// widened cache as its input.
TEST_CASE("cuda kv_append and attention over bf16 and f16 caches match the cpu kernels", "[cuda][attention]") {
  auto ctx = make_context();
  auto rng = test_rng(202);
  for (const eagerlm::DType dtype : {eagerlm::DType::kBF16, eagerlm::DType::kF16}) {
    for (const Case& c : cases()) {
      INFO("case: " << c.name << ", cache " << (dtype == eagerlm::DType::kBF16 ? "bf16" : "f16"));
      const KvLayout layout = eagerlm::kv_layout(c.max_len, c.n_head, c.d_head, dtype);
      const Batch batch = make_batch(c);
      const int64_t width = c.n_head * c.d_head;
      const int64_t n_rows = batch.n_rows;
      std::vector<float> qkv = random_floats(rng, size_t(n_rows * 3 * width), -1.0f, 1.0f);
      for (int64_t r = 0; r < n_rows; ++r)
        for (int64_t e = 0; e < width; ++e) qkv[size_t(r * 3 * width + e)] *= c.q_range;
      const auto k0 = narrowed(poisoned_cache(c, layout, rng), dtype);
      const auto v0 = narrowed(poisoned_cache(c, layout, rng), dtype);
      const int64_t ld_out = width + 2;
      std::vector<float> out0(size_t(n_rows * ld_out), kSentinel);
      for (int64_t r = 0; r < n_rows; ++r) std::fill_n(out0.begin() + r * ld_out, width, kNaN);
      const float scale = 1.0f / std::sqrt(float(c.d_head));

      auto k_cpu = k0, v_cpu = v0;
      auto out_cpu = out0;
      const StepBatch host_batch = batch.host();
      cpu::kv_append(qkv.data(), host_batch, layout, k_cpu.data(), v_cpu.data());
      cpu::attention(qkv.data(), 3 * width, host_batch, layout, k_cpu.data(), v_cpu.data(), scale, out_cpu.data(),
                     ld_out);

      const DeviceBatch device_batch(batch);
      DeviceBuffer<float> dqkv(qkv);
      DeviceBuffer<uint16_t> dk(k0), dv(v0);
      cuda::kv_append(*ctx, dqkv.get(), device_batch.get(), layout, dk.get(), dv.get());
      cuda::synchronize(*ctx);
      {
        INFO("kv_append: key cache");
        check_identical(widened(dk.download(), dtype), widened(k_cpu, dtype));
      }
      {
        INFO("kv_append: value cache");
        check_identical(widened(dv.download(), dtype), widened(v_cpu, dtype));
      }
      const auto bound =
          attention_bound(qkv, 3 * width, batch, layout, widened(k_cpu, dtype), widened(v_cpu, dtype), scale, ld_out);
      for (const int64_t chunk : kChunkChoices) {
        INFO("chunk_len " << chunk << " (0: automatic plan)");
        DeviceBuffer<float> dout(out0);
        run_attention(*ctx, chunk, dqkv.get(), 3 * width, device_batch.get(), layout, dk.get(), dv.get(), scale,
                      dout.get(), ld_out);
        cuda::synchronize(*ctx);
        check_close(dout.download(), out_cpu, bound);
      }
    }
  }
}

// With zero queries every score is 0, every weight exactly 1 and each output the plain mean of
// the values the row may see. Values are coded by position, slot and head, so row i of a sequence
// must produce ((L − 1)/2, slot, head) with L = past_len + i + 1: one key too many or too few, a
// wrong slot or head, shifts the result by far more than the rounding of the final division
// (bound 4u·|expected|; the sums of integers are exact in float).
TEST_CASE("cuda attention with uniform weights averages exactly the causal prefix", "[cuda][attention]") {
  auto ctx = make_context();
  auto rng = test_rng(202);
  for (const Case& c : cases()) {
    INFO("case: " << c.name);
    const KvLayout layout = eagerlm::kv_layout(c.max_len, c.n_head, c.d_head);
    const Batch batch = make_batch(c);
    const int64_t width = c.n_head * c.d_head, n_rows = batch.n_rows;
    auto code = [&](int64_t slot, int64_t head, int64_t pos, int64_t e) {
      return e % 3 == 0 ? float(pos) : (e % 3 == 1 ? float(slot) : float(head));
    };

    auto keys = poisoned_cache(c, layout, rng);  // random finite keys below past, NaN beyond
    std::vector<float> values(keys.size(), kNaN);
    std::vector<float> qkv(size_t(n_rows * 3 * width), 0.0f);  // q = 0
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (size_t s = 0; s < c.seqs.size(); ++s) {
      const Seq& q = c.seqs[s];
      for (int64_t h = 0; h < c.n_head; ++h)
        for (int64_t e = 0; e < c.d_head; ++e) {
          for (int64_t p = 0; p < q.past; ++p)
            values[size_t(q.slot * layout.slot_stride + h * layout.head_stride + p * layout.pos_stride + e)] =
                code(q.slot, h, p, e);
          for (int64_t i = 0; i < q.n_new; ++i) {
            const int64_t row = batch.row_start[s] + i;
            qkv[size_t(row * 3 * width + width + h * c.d_head + e)] = dist(rng);                           // key
            qkv[size_t(row * 3 * width + 2 * width + h * c.d_head + e)] = code(q.slot, h, q.past + i, e);  // value
          }
        }
    }
    std::vector<float> expected(size_t(n_rows * width));
    std::vector<double> bound(expected.size());
    for (size_t s = 0; s < c.seqs.size(); ++s)
      for (int64_t i = 0; i < c.seqs[s].n_new; ++i)
        for (int64_t h = 0; h < c.n_head; ++h)
          for (int64_t e = 0; e < c.d_head; ++e) {
            const size_t at = size_t((batch.row_start[s] + i) * width + h * c.d_head + e);
            const double n_keys = double(c.seqs[s].past + i + 1);
            const double want = e % 3 == 0 ? (n_keys - 1.0) / 2.0 : (e % 3 == 1 ? double(c.seqs[s].slot) : double(h));
            expected[at] = float(want);
            bound[at] = 4.0 * kU * std::abs(want);
          }

    const DeviceBatch device_batch(batch);
    DeviceBuffer<float> dqkv(qkv), dk(keys), dv(values);
    cuda::kv_append(*ctx, dqkv.get(), device_batch.get(), layout, dk.get(), dv.get());
    for (const int64_t chunk : kChunkChoices) {
      INFO("chunk_len " << chunk << " (0: automatic plan)");
      DeviceBuffer<float> dout(std::vector<float>(expected.size(), kNaN));
      run_attention(*ctx, chunk, dqkv.get(), 3 * width, device_batch.get(), layout, dk.get(), dv.get(),
                    1.0f / std::sqrt(float(c.d_head)), dout.get(), width);
      cuda::synchronize(*ctx);
      check_close(dout.download(), expected, bound);
    }
  }
}

// The split plan: no split when rows × heads fill the GPU or the cache is short; otherwise chunks
// of whole tiles, at least two, that cover max_len.
TEST_CASE("attention split plan covers the cache in whole tiles", "[cuda][attention]") {
  for (const int64_t max_len : {1, 64, 128, 129, 1000, 1024, 4096}) {
    for (const int64_t rows : {1, 4, 1024}) {
      const auto plan = cuda::plan_attention_split(rows, 12, max_len, 132);
      INFO("max_len=" << max_len << " rows=" << rows);
      REQUIRE(plan.n_splits >= 1);
      REQUIRE(plan.chunk_len % cuda::kAttentionTile == 0);
      REQUIRE(plan.chunk_len * plan.n_splits >= max_len);
      REQUIRE(plan.chunk_len * (plan.n_splits - 1) < max_len);
      if (plan.n_splits > 1) REQUIRE(plan.chunk_len >= 2 * cuda::kAttentionTile);
      if (rows == 1024 || max_len <= 128) REQUIRE(plan.n_splits == 1);
    }
  }
  REQUIRE(cuda::plan_attention_split(1, 12, 1024, 132).n_splits > 1);  // decode gets split
}
