// Batch invariance of the kernels of the forward pass: one row computed inside a batch of m rows
// (m = 1, 3, 8, 17, 64), at the first, a middle or the last position, among other random rows,
// must give bit for bit what it gives alone (m = 1). This is what lets the continuous-batching
// engine return, for a request run alongside others, exactly the logprobs it returns alone. The
// batch sizes cross every regime boundary of the products (1 row, register tiles, prefill panels;
// one thread or columns split over threads), and the positions move a row's address by amounts
// that are not a multiple of a vector (odd widths), so blocking, threading and alignment are all
// exercised. The numbers themselves are checked against references by the per-kernel tests; here
// only equality matters. Runs under every CPU variant (test_kernels_<isa>).
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/common/kv_layout.h"
#include "kernels/cpu/cpu_ops.h"
#include "test/kernels/typed_weights.h"
#include "test/support/random.h"

namespace test = eagerlm::test;
using eagerlm::GemmMath;
using eagerlm::KvLayout;
using eagerlm::StepBatch;
using eagerlm::WeightType;

namespace {

constexpr int64_t kBatchRows[] = {1, 3, 6, 8, 17, 64};

std::vector<int64_t> positions(int64_t m) {
  std::vector<int64_t> p = {0, m / 2, m - 1};
  p.erase(std::unique(p.begin(), p.end()), p.end());
  return p;
}

bool same_bits(const float* a, const float* b, int64_t n) { return std::memcmp(a, b, size_t(n) * sizeof(float)) == 0; }

// For every m and position: fill a batch of m random rows of `width` floats (row stride ld) with
// the target row at that position, run `op(batch, m)` and check that its output row `pos`
// (`out_width` floats at stride out_ld) equals `op` on the target alone.
template <typename Op>
void check_rows(std::mt19937& rng, const std::vector<float>& target, int64_t ld, int64_t out_width, int64_t out_ld,
                const Op& op) {
  std::vector<float> alone_in(size_t(ld), 0.0f);
  std::copy(target.begin(), target.end(), alone_in.begin());
  const std::vector<float> alone = op(alone_in, int64_t(1));
  for (const int64_t m : kBatchRows) {
    for (const int64_t pos : positions(m)) {
      INFO("m=" << m << " row " << pos);
      std::vector<float> batch = test::random_floats(rng, size_t(m * ld), -1.0f, 1.0f);
      std::copy(target.begin(), target.end(), batch.begin() + pos * ld);
      const std::vector<float> out = op(batch, m);
      CHECK(same_bits(out.data() + pos * out_ld, alone.data(), out_width));
    }
  }
}

constexpr WeightType kTypes[] = {WeightType::kF32, WeightType::kBF16, WeightType::kF16, WeightType::kInt8};

struct ProductShape {
  int64_t k, n;  // int8 takes k, the others k + 1 (a partial vector along k)
};
// 1×192×1030 is below column_split's threading threshold and 3 rows are above it, so a row alone
// runs on one thread and in a batch on several; 77 columns is never split.
const ProductShape kProductShapes[] = {{96, 77}, {192, 1030}};

}  // namespace

TEST_CASE("linear_typed: a row's output does not depend on the batch", "[kernels][batch_invariance]") {
  auto rng = test::test_rng(901);
  for (const WeightType type : kTypes) {
    for (const ProductShape& s : kProductShapes) {
      const int64_t k = type == WeightType::kInt8 ? s.k : s.k + 1, n = s.n, ldx = k + 3, ldy = n + 5;
      for (const bool with_bias : {false, true}) {
        INFO(eagerlm::weight_type_name(type) << " k=" << k << " n=" << n << " bias=" << with_bias);
        const auto w = test::random_typed_matrix(rng, type, k, n, true);
        const auto bias = test::random_floats(rng, size_t(n), -1.0f, 1.0f);
        const auto target = test::random_floats(rng, size_t(k), -1.0f, 1.0f);
        check_rows(rng, target, ldx, n, ldy, [&](const std::vector<float>& x, int64_t m) {
          std::vector<float> y(size_t(m * ldy), 0.0f);
          eagerlm::cpu::linear_typed(x.data(), ldx, w.view(), with_bias ? bias.data() : nullptr, y.data(), ldy, m, k,
                                     n, GemmMath::kFp32);
          return y;
        });
      }
    }
  }
}

TEST_CASE("linear_transposed_typed: a row's output does not depend on the batch", "[kernels][batch_invariance]") {
  auto rng = test::test_rng(902);
  for (const WeightType type : kTypes) {
    for (const ProductShape& s : kProductShapes) {
      const int64_t k = type == WeightType::kInt8 ? s.k : s.k + 1, n = s.n, ldx = k + 3, ldy = n + 5;
      INFO(eagerlm::weight_type_name(type) << " k=" << k << " n=" << n);
      const auto w = test::random_typed_matrix(rng, type, k, n, false);
      const auto target = test::random_floats(rng, size_t(k), -1.0f, 1.0f);
      check_rows(rng, target, ldx, n, ldy, [&](const std::vector<float>& x, int64_t m) {
        std::vector<float> y(size_t(m * ldy), 0.0f);
        eagerlm::cpu::linear_transposed_typed(x.data(), ldx, w.view(), y.data(), ldy, m, k, n, GemmMath::kFp32);
        return y;
      });
    }
  }
}

TEST_CASE("linear and linear_transposed (float32): a row's output does not depend on the batch",
          "[kernels][batch_invariance]") {
  auto rng = test::test_rng(903);
  for (const ProductShape& s : kProductShapes) {
    const int64_t k = s.k + 1, n = s.n, ldx = k + 3, ldy = n + 5;
    INFO("k=" << k << " n=" << n);
    const auto w = test::random_floats(rng, size_t(k * n), -1.0f, 1.0f);
    const auto bias = test::random_floats(rng, size_t(n), -1.0f, 1.0f);
    const auto target = test::random_floats(rng, size_t(k), -1.0f, 1.0f);
    check_rows(rng, target, ldx, n, ldy, [&](const std::vector<float>& x, int64_t m) {
      std::vector<float> y(size_t(m * ldy), 0.0f);
      eagerlm::cpu::linear(x.data(), ldx, w.data(), bias.data(), y.data(), ldy, m, k, n);
      return y;
    });
    check_rows(rng, target, ldx, n, ldy, [&](const std::vector<float>& x, int64_t m) {
      std::vector<float> y(size_t(m * ldy), 0.0f);
      eagerlm::cpu::linear_transposed(x.data(), ldx, w.data(), y.data(), ldy, m, k, n);
      return y;
    });
  }
}

TEST_CASE("layer_norm, softmax: a row's output does not depend on the batch", "[kernels][batch_invariance]") {
  auto rng = test::test_rng(904);
  // 64 rows of 769 exceed the kernels' parallel thresholds; 77 leaves rows at odd addresses.
  for (const int64_t cols : {int64_t(77), int64_t(769)}) {
    INFO("cols=" << cols);
    const auto gamma = test::random_floats(rng, size_t(cols), 0.5f, 1.5f);
    const auto beta = test::random_floats(rng, size_t(cols), -1.0f, 1.0f);
    auto target = test::random_floats(rng, size_t(cols), -1.0f, 1.0f);
    for (auto& v : target) v = v * 3.0f + 2.0f;  // a mean far from 0
    check_rows(rng, target, cols, cols, cols, [&](const std::vector<float>& x, int64_t m) {
      std::vector<float> y(x.size());
      eagerlm::cpu::layer_norm(x.data(), gamma.data(), beta.data(), y.data(), m, cols, 1e-5f);
      return y;
    });
    check_rows(rng, target, cols, cols, cols, [&](const std::vector<float>& x, int64_t m) {
      std::vector<float> y = x;  // in place, as the model runs it
      eagerlm::cpu::layer_norm(y.data(), gamma.data(), beta.data(), y.data(), m, cols, 1e-5f);
      return y;
    });
    check_rows(rng, target, cols, cols, cols, [&](const std::vector<float>& x, int64_t m) {
      std::vector<float> y = x;
      const std::vector<int32_t> valid(size_t(m), int32_t(cols - 3));  // masked tails too
      eagerlm::cpu::softmax(y.data(), m, cols, valid.data());
      return y;
    });
  }
}

TEST_CASE("gelu, add, embedding: a row's output does not depend on the batch", "[kernels][batch_invariance]") {
  auto rng = test::test_rng(905);
  // 64 rows of 1537 exceed gelu's and add's parallel thresholds, so their chunks (8192, 16384
  // elements) cut rows at varying places; 77 leaves rows at odd addresses.
  for (const int64_t cols : {int64_t(77), int64_t(1537)}) {
    INFO("cols=" << cols);
    const auto target = test::random_floats(rng, size_t(cols), -4.0f, 4.0f);
    check_rows(rng, target, cols, cols, cols, [&](const std::vector<float>& x, int64_t m) {
      std::vector<float> y = x;  // in place, as the model runs it
      eagerlm::cpu::gelu(y.data(), y.data(), m * cols);
      return y;
    });
  }
  // add (the residual add, y aliasing a): both addends of the target row at its position.
  const int64_t cols = 1537;
  const auto a = test::random_floats(rng, size_t(cols), -4.0f, 4.0f);
  const auto b = test::random_floats(rng, size_t(cols), -4.0f, 4.0f);
  std::vector<float> alone(static_cast<size_t>(cols));
  eagerlm::cpu::add(a.data(), b.data(), alone.data(), cols);
  for (const int64_t m : kBatchRows) {
    for (const int64_t pos : positions(m)) {
      INFO("add m=" << m << " row " << pos);
      auto xa = test::random_floats(rng, size_t(m * cols), -4.0f, 4.0f);
      auto xb = test::random_floats(rng, size_t(m * cols), -4.0f, 4.0f);
      std::copy(a.begin(), a.end(), xa.begin() + pos * cols);
      std::copy(b.begin(), b.end(), xb.begin() + pos * cols);
      eagerlm::cpu::add(xa.data(), xb.data(), xa.data(), m * cols);
      CHECK(same_bits(xa.data() + pos * cols, alone.data(), cols));
    }
  }

  // embedding: the target token (id 7 at position 3) among others.
  const int64_t vocab = 50, n_pos = 20, d = 77;
  const auto wte = test::random_floats(rng, size_t(vocab * d), -1.0f, 1.0f);
  const auto wpe = test::random_floats(rng, size_t(n_pos * d), -1.0f, 1.0f);
  const int32_t id = 7, position = 3;
  const eagerlm::Weights wte_f32{eagerlm::WeightType::kF32, wte.data(), nullptr};
  std::vector<float> single(static_cast<size_t>(d));
  eagerlm::cpu::embedding(&id, &position, 1, wte_f32, wpe.data(), d, single.data());
  std::uniform_int_distribution<int32_t> ids(0, int32_t(vocab - 1)), pos_dist(0, int32_t(n_pos - 1));
  for (const int64_t m : kBatchRows) {
    for (const int64_t pos : positions(m)) {
      INFO("embedding m=" << m << " row " << pos);
      std::vector<int32_t> batch_ids(static_cast<size_t>(m)), batch_pos(static_cast<size_t>(m));
      for (int64_t r = 0; r < m; ++r) {
        batch_ids[size_t(r)] = ids(rng);
        batch_pos[size_t(r)] = pos_dist(rng);
      }
      batch_ids[size_t(pos)] = id;
      batch_pos[size_t(pos)] = position;
      std::vector<float> y(size_t(m * d));
      eagerlm::cpu::embedding(batch_ids.data(), batch_pos.data(), m, wte_f32, wpe.data(), d, y.data());
      CHECK(same_bits(y.data() + pos * d, single.data(), d));
    }
  }
}

TEST_CASE("attention: a sequence's output does not depend on the batch or its cache slot",
          "[kernels][batch_invariance]") {
  auto rng = test::test_rng(906);
  constexpr int64_t kSlots = 6, kMaxLen = 100, kHeads = 2;
  // d_head 64 takes the AVX-512 path where the variant has it; 19 the portable one, with keys
  // at addresses that differ from slot to slot by amounts that are not a multiple of a vector.
  for (const int64_t d_head : {int64_t(64), int64_t(19)}) {
    // The target: a decode row after 70 cached positions (two key blocks), or a prefill chunk of
    // 5 rows after 10.
    for (const int32_t target_new : {1, 5}) {
      const int32_t target_past = target_new == 1 ? 70 : 10;
      INFO("d_head=" << d_head << " target n_new=" << target_new);
      const KvLayout layout = eagerlm::kv_layout(kMaxLen, kHeads, d_head);
      const int64_t width = kHeads * d_head, ld_qkv = 3 * width + 1, ld_out = width + 2;
      const int64_t cache_size = kSlots * layout.slot_stride;
      // The target's keys and values (one slot's worth) and query rows.
      const auto target_k = test::random_floats(rng, size_t(layout.slot_stride), -1.0f, 1.0f);
      const auto target_v = test::random_floats(rng, size_t(layout.slot_stride), -1.0f, 1.0f);
      const auto target_q = test::random_floats(rng, size_t(target_new * ld_qkv), -2.0f, 2.0f);
      const float scale = 0.125f;

      // Runs a step whose sequences are `seqs` (slot, row_start, n_new, past) with the target's
      // cache in slot target_slot and its queries at rows [target_row, target_row + target_new);
      // returns those output rows.
      auto run = [&](std::vector<std::array<int32_t, 4>> seqs, int32_t target_slot, int32_t target_row,
                     int32_t n_rows) {
        auto k_cache = test::random_floats(rng, size_t(cache_size), -1.0f, 1.0f);
        auto v_cache = test::random_floats(rng, size_t(cache_size), -1.0f, 1.0f);
        std::copy(target_k.begin(), target_k.end(), k_cache.begin() + target_slot * layout.slot_stride);
        std::copy(target_v.begin(), target_v.end(), v_cache.begin() + target_slot * layout.slot_stride);
        auto qkv = test::random_floats(rng, size_t(n_rows * ld_qkv), -2.0f, 2.0f);
        std::copy(target_q.begin(), target_q.end(), qkv.begin() + target_row * ld_qkv);
        std::vector<int32_t> slot, row_start, n_new, past;
        for (const auto& s : seqs) {
          slot.push_back(s[0]);
          row_start.push_back(s[1]);
          n_new.push_back(s[2]);
          past.push_back(s[3]);
        }
        const StepBatch batch{int32_t(seqs.size()), n_rows, slot.data(), row_start.data(), n_new.data(), past.data()};
        std::vector<float> out(size_t(n_rows * ld_out), 0.0f);
        eagerlm::cpu::attention(qkv.data(), ld_qkv, batch, layout, k_cache.data(), v_cache.data(), scale, out.data(),
                                ld_out);
        return std::vector<float>(out.begin() + target_row * ld_out, out.begin() + (target_row + target_new) * ld_out);
      };

      const std::vector<float> alone = run({{2, 0, target_new, target_past}}, 2, 0, target_new);
      for (const int64_t m : kBatchRows) {
        if (m < target_new) continue;
        for (const int64_t pos_any : positions(m)) {
          const auto pos = int32_t(std::min<int64_t>(pos_any, m - target_new));
          INFO("m=" << m << " target rows from " << pos);
          // Before the target: one prefill sequence (slot 0); after it: decode rows of sequences
          // in slot 5 with growing pasts. The target's own slot moves with m and pos.
          const auto target_slot = int32_t(1 + (m + pos) % 4);
          std::vector<std::array<int32_t, 4>> seqs;
          if (pos > 0) seqs.push_back({0, 0, pos, 3});
          seqs.push_back({target_slot, pos, target_new, target_past});
          for (int32_t r = pos + target_new; r < int32_t(m); ++r) seqs.push_back({5, r, 1, 20 + r});
          const std::vector<float> got = run(seqs, target_slot, pos, int32_t(m));
          for (int32_t i = 0; i < target_new; ++i) {
            INFO("target row " << i);
            CHECK(same_bits(got.data() + i * ld_out, alone.data() + i * ld_out, width));
          }
        }
      }
    }
  }
}
