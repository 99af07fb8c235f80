// The kernels under eagerlm.jax.init (cpu_ops.h: fill_random_bits32, fill_uniform_f32,
// fill_erfinv_scaled_f32, erf_inv_f32, fma_f32) against their scalar definitions, on fresh random inputs, over sizes,
// thread counts and the 2^32 counter boundary. Their agreement with jax.jit itself is checked
// from Python (test/python_package/test_jax_init.py).
#include <catch2/catch.hpp>

#include "kernels/common/openmp.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "kernels/common/random/normal.h"
#include "kernels/cpu/cpu_ops.h"

using namespace eagerlm;
using namespace eagerlm::rng;

namespace {

std::vector<uint32_t> bits_of(const std::vector<float>& v) {
  std::vector<uint32_t> out(v.size());
  if (!v.empty()) std::memcpy(out.data(), v.data(), v.size() * sizeof(float));  // empty: data() may be null
  return out;
}

const int64_t kSizes[] = {0, 1, 15, 17, 1000, 70001};

}  // namespace

TEST_CASE("fill_random_bits32 is random_bits32 element by element", "[random][jax]") {
  std::mt19937_64 rng(Catch::rngSeed());
  const Key key = key_from_seed(rng());
  const int saved_threads = omp_get_max_threads();
  for (const uint64_t first : {uint64_t{0}, (uint64_t{1} << 32) - 5}) {  // runs across the high word
    for (const int threads : {1, 2}) {
      omp_set_num_threads(threads);
      for (const int64_t n : kSizes) {
        INFO("first " << first << " n " << n << " threads " << threads);
        std::vector<uint32_t> out(size_t(n) + 1, 0xdeadbeefu);
        cpu::fill_random_bits32(key, out.data(), n, first);
        bool same = true;
        for (int64_t i = 0; i < n; ++i) same = same && out[size_t(i)] == random_bits32(key, first + uint64_t(i));
        CHECK(same);
        CHECK(out[size_t(n)] == 0xdeadbeefu);
      }
    }
  }
  omp_set_num_threads(saved_threads);
}

TEST_CASE("fill_erfinv_scaled_f32 is erfinv(u) * scale; at scale sqrt(2) the normal itself", "[random][jax]") {
  std::mt19937_64 rng(Catch::rngSeed());
  const Key key = key_from_seed(rng());
  const float scale = std::uniform_real_distribution<float>(0.001f, 3.0f)(rng);
  for (const int64_t n : kSizes) {
    INFO("n " << n << " scale " << scale);
    std::vector<float> out(size_t(n) + 1, -7.0f), normal(size_t(n) + 1, -7.0f);
    cpu::fill_erfinv_scaled_f32(key, scale, out.data(), n, 0);
    cpu::fill_erfinv_scaled_f32(key, kSqrt2, normal.data(), n, 0);
    std::vector<float> expected(static_cast<size_t>(n)), expected_normal(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const float e = erfinv_f32(uniform_pm1_from_bits(random_bits32(key, uint64_t(i))));
      expected[size_t(i)] = fp::mul(e, scale);
      expected_normal[size_t(i)] = scaled_normal_at(key, uint64_t(i), 1.0f);
    }
    CHECK(bits_of(std::vector<float>(out.begin(), out.begin() + n)) == bits_of(expected));
    CHECK(bits_of(std::vector<float>(normal.begin(), normal.begin() + n)) == bits_of(expected_normal));
    CHECK(out[size_t(n)] == -7.0f);
  }
}

namespace {

// jax.random.uniform's last steps written out here: the bits' top 23 as a mantissa in [1, 2),
// minus 1, one fma with the width and the low end, then max(lo, ·) with NumPy's NaN rule.
float uniform_definition(uint32_t bits, float lo, float width) {
  const uint32_t mantissa = (bits >> 9) | 0x3f800000u;
  float one_to_two;
  std::memcpy(&one_to_two, &mantissa, sizeof one_to_two);
  const float u = std::fmaf(one_to_two - 1.0f, width, lo);
  return (lo >= u || std::isnan(lo)) ? lo : u;
}

}  // namespace

TEST_CASE("fill_uniform_f32 is jax.random.uniform's bits, fma and max element by element", "[random][jax]") {
  std::mt19937_64 rng(Catch::rngSeed());
  const Key key = key_from_seed(rng());
  const int saved_threads = omp_get_max_threads();
  const float lo = std::uniform_real_distribution<float>(-3.0f, 1.0f)(rng);
  const float width = std::uniform_real_distribution<float>(0.001f, 5.0f)(rng);
  const std::pair<float, float> ranges[] = {{lo, width}, {-0.5f, 1.0f}, {0.0f, 0.0f}, {-1.0f, 3e38f}};
  for (const auto& [low, w] : ranges) {
    for (const uint64_t first : {uint64_t{0}, (uint64_t{1} << 32) - 5}) {  // runs across the high word
      for (const int threads : {1, 2}) {
        omp_set_num_threads(threads);
        for (const int64_t n : kSizes) {
          INFO("lo " << low << " width " << w << " first " << first << " n " << n << " threads " << threads);
          std::vector<float> out(size_t(n) + 1, -7.0f), expected(static_cast<size_t>(n));
          cpu::fill_uniform_f32(key, low, w, out.data(), n, first);
          for (int64_t i = 0; i < n; ++i)
            expected[size_t(i)] = uniform_definition(random_bits32(key, first + uint64_t(i)), low, w);
          CHECK(bits_of(std::vector<float>(out.begin(), out.begin() + n)) == bits_of(expected));
          CHECK(out[size_t(n)] == -7.0f);
        }
      }
    }
  }
  omp_set_num_threads(saved_threads);
}

TEST_CASE("erf_inv_f32 is erfinv_f32 on [-1, 1], inf at the ends, NaN outside", "[random][jax]") {
  std::mt19937_64 rng(Catch::rngSeed());
  std::uniform_real_distribution<float> inside(-1.0f, 1.0f);
  std::vector<float> x(70001);
  for (float& v : x) v = inside(rng);
  x[0] = 0.0f;
  x[1] = -0.0f;
  x[2] = 1e-30f;
  std::vector<float> out(x.size());
  cpu::erf_inv_f32(x.data(), out.data(), int64_t(x.size()));
  std::vector<float> expected(x.size());
  for (size_t i = 0; i < x.size(); ++i) expected[i] = erfinv_f32(x[i]);
  CHECK(bits_of(out) == bits_of(expected));

  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> edges = {1.0f, -1.0f, 1.5f, -2.0f, nan, std::numeric_limits<float>::infinity()};
  cpu::erf_inv_f32(edges.data(), edges.data(), int64_t(edges.size()));  // in place
  CHECK(edges[0] == std::numeric_limits<float>::infinity());
  CHECK(edges[1] == -std::numeric_limits<float>::infinity());
  for (size_t i = 2; i < edges.size(); ++i) CHECK(std::isnan(edges[i]));
}

TEST_CASE("fma_f32 rounds a*b + c once", "[random][jax]") {
  std::mt19937_64 rng(Catch::rngSeed());
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  for (const int64_t n : kSizes) {
    INFO("n " << n);
    std::vector<float> a(static_cast<size_t>(n)), b(a), c(a), out(static_cast<size_t>(n) + 1, -7.0f);
    for (int64_t i = 0; i < n; ++i) {
      a[size_t(i)] = value(rng);
      b[size_t(i)] = value(rng);
      c[size_t(i)] = value(rng);
    }
    cpu::fma_f32(a.data(), b.data(), c.data(), out.data(), n);
    std::vector<float> expected(static_cast<size_t>(n));
    bool differs_from_two_roundings = false;
    for (int64_t i = 0; i < n; ++i) {
      expected[size_t(i)] = std::fma(a[size_t(i)], b[size_t(i)], c[size_t(i)]);
      const float twice = fp::add(fp::mul(a[size_t(i)], b[size_t(i)]), c[size_t(i)]);
      differs_from_two_roundings = differs_from_two_roundings || twice != expected[size_t(i)];
    }
    CHECK(bits_of(std::vector<float>(out.begin(), out.begin() + n)) == bits_of(expected));
    CHECK(out[size_t(n)] == -7.0f);
    if (n >= 1000) CHECK(differs_from_two_roundings);  // the test can tell a fused result apart
  }
  std::vector<float> x = {3.0f, 0.1f}, y = {7.0f, 0.3f}, z = {1.0f, -0.03f};
  cpu::fma_f32(x.data(), y.data(), z.data(), x.data(), 2);  // out aliasing a
  CHECK(x[0] == 22.0f);
  CHECK(x[1] == std::fma(0.1f, 0.3f, -0.03f));
}
