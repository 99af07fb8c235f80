// kv_append against its reference (plain copies, so compared exactly): a ragged batch with a
// non-identity slot mapping, rows not in sequence order, an unused slot and a sequence reaching
// max_len. Beyond matching the reference, exactly the intended number of cells must change.
// A BF16 or F16 cache must hold the reference's values rounded as dtype.h rounds, bit for bit.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "kernels/common/dtype.h"
#include "kernels/cpu/cpu_ops.h"
#include "test/reference/kv_append.h"
#include "test/support/random.h"
#include "test/support/tolerance.h"

namespace ref = eagerlm::reference;
namespace test = eagerlm::test;
using eagerlm::KvLayout;
using eagerlm::StepBatch;

namespace {

struct Seq {
  int32_t slot, past, n_new;
};

// Bitwise equality, so a written NaN or -0 cannot pass as untouched.
template <class T>
int64_t count_different(const std::vector<T>& a, const std::vector<T>& b) {
  int64_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += std::memcmp(&a[i], &b[i], sizeof(T)) != 0;
  return n;
}

std::vector<uint16_t> halves(const std::vector<float>& v, eagerlm::DType dtype) {
  std::vector<uint16_t> h(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    h[i] = dtype == eagerlm::DType::kBF16 ? eagerlm::float_to_bf16(v[i]) : eagerlm::float_to_f16(v[i]);
  return h;
}

void run(const std::vector<Seq>& seqs, int64_t n_slots, int64_t max_len, int64_t n_head, int64_t d_head,
         uint32_t salt, eagerlm::DType dtype = eagerlm::DType::kF32) {
  auto rng = test::test_rng(salt);
  const KvLayout layout = eagerlm::kv_layout(max_len, n_head, d_head, dtype);
  // Rows in reverse sequence order: row_start is not the running sum in sequence order.
  std::vector<int32_t> slot, row_start(seqs.size()), n_new, past;
  int32_t rows = 0;
  for (size_t s = seqs.size(); s-- > 0;) {
    row_start[s] = rows;
    rows += seqs[s].n_new;
  }
  for (const Seq& s : seqs) {
    slot.push_back(s.slot);
    n_new.push_back(s.n_new);
    past.push_back(s.past);
  }
  StepBatch batch;
  batch.n_seq = int32_t(seqs.size());
  batch.n_rows = rows;
  batch.slot = slot.data();
  batch.row_start = row_start.data();
  batch.n_new = n_new.data();
  batch.past_len = past.data();

  // The input values differ from every cache value (different ranges), so each write shows. The
  // caches have one guard slot past the last, where a write past max_len would land.
  const auto qkv = test::random_floats(rng, size_t(rows * 3 * n_head * d_head), 1.0f, 2.0f);
  const size_t cache_size = size_t((n_slots + 1) * layout.slot_stride);
  auto k_before = test::random_floats(rng, cache_size, -1.0f, 0.0f);
  auto v_before = test::random_floats(rng, cache_size, -1.0f, 0.0f);
  const int64_t written = int64_t(rows) * n_head * d_head;
  if (dtype == eagerlm::DType::kF32) {
    auto k_cache = k_before, v_cache = v_before;
    eagerlm::cpu::kv_append(qkv.data(), batch, layout, k_cache.data(), v_cache.data());
    const auto [k_want, v_want] = ref::kv_append(qkv.data(), batch, layout, k_before, v_before);
    CHECK(count_different(k_cache, k_want) == 0);
    CHECK(count_different(v_cache, v_want) == 0);
    CHECK(count_different(k_cache, k_before) == written);
    CHECK(count_different(v_cache, v_before) == written);
    return;
  }
  // The cache's halves before; the reference writes floats, rounded here as dtype.h rounds (the
  // untouched cells, halves to begin with, round to themselves).
  const auto k_half_before = halves(k_before, dtype), v_half_before = halves(v_before, dtype);
  auto k_cache = k_half_before, v_cache = v_half_before;
  eagerlm::cpu::kv_append(qkv.data(), batch, layout, k_cache.data(), v_cache.data());
  for (size_t i = 0; i < cache_size; ++i) {
    k_before[i] = dtype == eagerlm::DType::kBF16 ? eagerlm::bf16_to_float(k_half_before[i])
                                                 : eagerlm::f16_to_float(k_half_before[i]);
    v_before[i] = dtype == eagerlm::DType::kBF16 ? eagerlm::bf16_to_float(v_half_before[i])
                                                 : eagerlm::f16_to_float(v_half_before[i]);
  }
  const auto [k_want, v_want] = ref::kv_append(qkv.data(), batch, layout, k_before, v_before);
  CHECK(count_different(k_cache, halves(k_want, dtype)) == 0);
  CHECK(count_different(v_cache, halves(v_want, dtype)) == 0);
  CHECK(count_different(k_cache, k_half_before) == written);
  CHECK(count_different(v_cache, v_half_before) == written);
}

}  // namespace

TEST_CASE("kv_append writes exactly the new cells", "[kernels][kv_append]") {
  SECTION("ragged batch, permuted slots, slot 1 unused, one sequence filling max_len") {
    run({{2, 0, 5}, {0, 17, 1}, {3, 64, 6}, {4, 69, 1}}, 5, 70, 3, 5, 71);
  }
  SECTION("decode batch") { run({{1, 63, 1}, {0, 64, 1}, {2, 0, 1}}, 3, 65, 2, 64, 72); }
  SECTION("long prefill (parallel path)") { run({{0, 3, 120}}, 1, 128, 12, 64, 73); }
  SECTION("a sequence with no new rows") { run({{1, 10, 0}, {0, 0, 4}}, 2, 16, 2, 3, 74); }
}

TEST_CASE("kv_append rounds into a BF16 or F16 cache", "[kernels][kv_append]") {
  for (const auto dtype : {eagerlm::DType::kBF16, eagerlm::DType::kF16}) {
    INFO((dtype == eagerlm::DType::kBF16 ? "BF16" : "F16"));
    run({{2, 0, 5}, {0, 17, 1}, {3, 64, 6}, {4, 69, 1}}, 5, 70, 3, 5, 81, dtype);
    run({{1, 63, 1}, {0, 64, 1}, {2, 0, 1}}, 3, 65, 2, 64, 82, dtype);
    run({{0, 3, 120}}, 1, 128, 12, 64, 83, dtype);
  }
}
