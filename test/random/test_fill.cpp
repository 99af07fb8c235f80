// The CPU fill loops against the scalar per-element definition (normal.h), over pieces, thread
// counts, the 2^32 counter boundary, storage dtypes and constants.
#include <catch2/catch.hpp>

#include "kernels/common/openmp.h"

#include <random>
#include <vector>

#include "engine/core/error.h"
#include "engine/ops/exec_context.h"
#include "engine/ops/ops.h"
#include "kernels/common/random/normal.h"
#include "kernels/cpu/cpu_ops.h"

using namespace eagerlm;
using namespace eagerlm::rng;
using cpu::fill_constant;
using cpu::fill_normal;
using cpu::fill_normal_f32;

namespace {

// The plain reference: one scalar call per element.
std::vector<float> reference_values(Key key, float stddev, uint64_t first_index, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[size_t(i)] = scaled_normal_at(key, first_index + uint64_t(i), stddev);
  return out;
}

struct ThreadCount {  // sets the OpenMP thread count for one scope
  explicit ThreadCount(int n) : saved(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~ThreadCount() { omp_set_num_threads(saved); }
  int saved;
};

}  // namespace

TEST_CASE("fill_normal_f32 equals the per-element definition", "[random][fill]") {
  std::mt19937_64 rng(Catch::rngSeed());
  const Key key = key_from_seed(rng());
  const float stddev = 0.02f;
  for (int64_t n : {int64_t(0), int64_t(1), int64_t(15), int64_t(17), int64_t(100003)}) {
    INFO("n " << n);
    std::vector<float> out(size_t(n) + 1, -7.0f);
    fill_normal_f32(key, stddev, out.data(), n);
    CHECK(std::vector<float>(out.begin(), out.begin() + n) == reference_values(key, stddev, 0, n));
    CHECK(out[size_t(n)] == -7.0f);  // nothing written past the end
  }
}

TEST_CASE("fill_normal_f32 crosses the 2^32 counter boundary correctly", "[random][fill]") {
  const Key key = key_from_seed(Catch::rngSeed());
  const uint64_t first = (uint64_t(1) << 32) - 40000;  // the range straddles high word 0 -> 1
  const int64_t n = 100000;
  std::vector<float> out(static_cast<size_t>(n));
  fill_normal_f32(key, 1.0f, out.data(), n, first);
  CHECK(out == reference_values(key, 1.0f, first, n));
  const uint64_t far = (uint64_t(5) << 32) + 123;  // a tensor of more than 2^34 elements
  fill_normal_f32(key, 1.0f, out.data(), 1000, far);
  CHECK(std::vector<float>(out.begin(), out.begin() + 1000) == reference_values(key, 1.0f, far, 1000));
}

TEST_CASE("fill_normal_f32 does not depend on pieces or thread count", "[random][fill]") {
  std::mt19937_64 rng(Catch::rngSeed());
  const Key key = key_from_seed(rng());
  const int64_t n = 300001;
  std::vector<float> whole(static_cast<size_t>(n));
  {
    ThreadCount one(1);
    fill_normal_f32(key, 0.5f, whole.data(), n);
  }
  for (int threads : {2, 3, 5}) {
    ThreadCount t(threads);
    std::vector<float> again(static_cast<size_t>(n));
    fill_normal_f32(key, 0.5f, again.data(), n);
    CHECK(again == whole);
  }
  std::vector<float> pieces(static_cast<size_t>(n));
  for (int64_t at = 0; at < n;) {
    const int64_t count = std::min<int64_t>(n - at, int64_t(rng() % 70000) + 1);
    fill_normal_f32(key, 0.5f, pieces.data() + at, count, uint64_t(at));
    at += count;
  }
  CHECK(pieces == whole);
}

TEST_CASE("fill_normal stores F16 and BF16 as the rounded float32 values", "[random][fill]") {
  const Key key = key_from_seed(Catch::rngSeed());
  const int64_t n = 50001;
  const std::vector<float> values = reference_values(key, 0.02f, 77, n);
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    INFO(dtype_name(dtype));
    std::vector<uint16_t> out(static_cast<size_t>(n));
    fill_normal(key, 0.02f, dtype, out.data(), n, 77);
    size_t mismatches = 0;
    for (int64_t i = 0; i < n; ++i) {
      const uint16_t expected =
          dtype == DType::kF16 ? float_to_f16(values[size_t(i)]) : float_to_bf16(values[size_t(i)]);
      mismatches += out[size_t(i)] != expected;
    }
    CHECK(mismatches == 0);
  }
  std::vector<float> f32(static_cast<size_t>(n));
  fill_normal(key, 0.02f, DType::kF32, f32.data(), n, 77);
  CHECK(f32 == values);
}

TEST_CASE("fill_constant writes exact constants in every parameter dtype", "[random][fill]") {
  const int64_t n = 70001;
  std::vector<float> f32(size_t(n), -1.0f);
  fill_constant(1.0f, DType::kF32, f32.data(), n);
  CHECK(std::count(f32.begin(), f32.end(), 1.0f) == n);
  fill_constant(0.0f, DType::kF32, f32.data(), n);
  CHECK(std::count(f32.begin(), f32.end(), 0.0f) == n);
  std::vector<uint16_t> half(static_cast<size_t>(n));
  fill_constant(1.0f, DType::kF16, half.data(), n);
  CHECK(std::count(half.begin(), half.end(), uint16_t(0x3c00)) == n);
  fill_constant(1.0f, DType::kBF16, half.data(), n);
  CHECK(std::count(half.begin(), half.end(), uint16_t(0x3f80)) == n);
  fill_constant(0.0f, DType::kBF16, half.data(), n);
  CHECK(std::count(half.begin(), half.end(), uint16_t(0)) == n);
}

TEST_CASE("fill ops refuse a non-parameter dtype", "[random][fill]") {
  // The kernels trust their arguments; the ops in front of them check.
  const ExecContext ctx(Device::kCpu);
  Tensor out = Tensor::zeros({4}, DType::kI32);
  CHECK_THROWS_AS(ops::fill_normal(ctx, out, Key{}, 1.0f, 0), Error);
  CHECK_THROWS_AS(ops::fill_constant(ctx, out, 1.0f), Error);
}
