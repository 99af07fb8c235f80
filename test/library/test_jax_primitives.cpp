// eagerlm/jax_primitives.hpp through the installed library's interface: values as the kernels'
// own definitions give them (a few known answers of JAX's), and bad arguments refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include <eagerlm/eagerlm.hpp>

TEST_CASE("jax primitives: known answers of jax.random", "[library][jax]") {
  // jax.random.key_data(jax.random.split(jax.random.key(0), 1)[0]) in partitionable mode is
  // threefry2x32((0, 0), (0, 0)); Random123's known answer for the zero key and counter.
  const uint32_t zero = 0;
  uint32_t y0 = 0, y1 = 0;
  eagerlm::jax::threefry2x32(&zero, &zero, &zero, &zero, &y0, &y1, 1);
  CHECK(y0 == 0x6b200159u);
  CHECK(y1 == 0x99ba4efeu);
  // random bits are threefry of the element's (high, low) index, words XORed.
  std::vector<uint32_t> bits(3);
  eagerlm::jax::random_bits32(0, 0, bits.data(), 3);
  CHECK(bits[0] == (0x6b200159u ^ 0x99ba4efeu));
  // normal at scale sqrt(2) is sqrt(2) * erf_inv(u): consistent with erf_inv_f32.
  float n = 0.0f, one = 1.0f, inf = 0.0f;
  eagerlm::jax::normal_f32(0, 0, 1.0f, &n, 1);  // erf_inv(u) itself
  eagerlm::jax::erf_inv_f32(&one, &inf, 1);
  CHECK(std::isinf(inf));
  CHECK(std::abs(n) < 10.0f);
  float a = 2.0f, b = 3.0f, c = 1.0f, out = 0.0f;
  eagerlm::jax::fma_f32(&a, &b, &c, &out, 1);
  CHECK(out == 7.0f);
}

TEST_CASE("jax primitives refuse a negative count and null arrays", "[library][jax][errors]") {
  float x = 0.0f;
  CHECK_THROWS_AS(eagerlm::jax::erf_inv_f32(&x, &x, -1), eagerlm::Error);
  CHECK_THROWS_WITH(eagerlm::jax::erf_inv_f32(nullptr, &x, 4), Catch::Contains("null"));
  CHECK_THROWS_WITH(eagerlm::jax::random_bits32(0, 0, nullptr, 2), Catch::Contains("random_bits32"));
  try {
    eagerlm::jax::fma_f32(&x, &x, nullptr, &x, 1);
    FAIL("no error");
  } catch (const eagerlm::Error& e) {
    CHECK(e.code() == eagerlm::ErrorCode::kInvalidArgument);
  }
  eagerlm::jax::erf_inv_f32(nullptr, nullptr, 0);  // nothing to do is fine
}
