// threefry2x32, key construction, fold_in, per-element bits and the name hash, against the
// Random123 known answers and vectors computed by JAX (test/random/jax_vectors.h).
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <set>

#include "kernels/common/random/threefry.h"
#include "test/random/jax_vectors.h"

using namespace eagerlm::rng;
namespace tv = eagerlm::test_vectors;

// Random123's kat_vectors for threefry2x32 with 20 rounds, checked at compile time too.
static_assert(threefry2x32({0u, 0u}, {0u, 0u}).x0 == 0x6b200159u);
static_assert(threefry2x32({0u, 0u}, {0u, 0u}).x1 == 0x99ba4efeu);
static_assert(threefry2x32({0x13198a2eu, 0x03707344u}, {0x243f6a88u, 0x85a308d3u}).x0 == 0xc4923a9cu);
static_assert(threefry2x32({0x13198a2eu, 0x03707344u}, {0x243f6a88u, 0x85a308d3u}).x1 == 0x483df7a0u);

TEST_CASE("threefry2x32 matches the Random123 known answers (as computed by JAX)", "[random][threefry]") {
  for (const auto& kat : tv::kThreefryKat) {
    const Block out = threefry2x32({kat.key[0], kat.key[1]}, {kat.counter[0], kat.counter[1]});
    CHECK(out.x0 == kat.out[0]);
    CHECK(out.x1 == kat.out[1]);
  }
}

TEST_CASE("key_from_seed matches jax.random.key (64-bit seeds as with jax_enable_x64)", "[random][threefry]") {
  for (const auto& v : tv::kSeedKeys) {
    INFO("seed " << v.seed);
    const Key key = key_from_seed(v.seed);
    CHECK(key.k0 == v.key[0]);
    CHECK(key.k1 == v.key[1]);
  }
}

TEST_CASE("fold_in matches jax.random.fold_in", "[random][threefry]") {
  for (const auto& v : tv::kFoldIns) {
    INFO("seed " << v.seed << " data " << v.data);
    const Key key = fold_in(key_from_seed(v.seed), v.data);
    CHECK(key.k0 == v.key[0]);
    CHECK(key.k1 == v.key[1]);
  }
}

TEST_CASE("random_bits32 matches jax.random.bits, including indices past 2^32", "[random][threefry]") {
  for (const auto& v : tv::kSeedBits) {
    const Key key = key_from_seed(v.seed);
    for (uint64_t i = 0; i < 8; ++i) {
      INFO("seed " << v.seed << " index " << i);
      CHECK(random_bits32(key, i) == v.bits[i]);
    }
  }
  for (const auto& v : tv::kLargeIndexBits) {
    INFO("seed " << v.seed << " index " << v.index);
    CHECK(random_bits32(key_from_seed(v.seed), v.index) == v.bits);
  }
}

TEST_CASE("random_bits32 uses the whole 64-bit index", "[random][threefry]") {
  // Indices that agree in their low word must still differ (the high word is the counter's x0).
  const Key key = key_from_seed(9);
  std::set<uint32_t> seen;
  for (uint64_t hi = 0; hi < 64; ++hi) seen.insert(random_bits32(key, (hi << 32) | 12345u));
  CHECK(seen.size() == 64);
}

TEST_CASE("fnv1a32 matches the FNV reference values and the generator script", "[random][threefry]") {
  // Published FNV-1a 32-bit test values.
  CHECK(name_hash("") == 0x811c9dc5u);
  CHECK(name_hash("a") == 0xe40c292cu);
  CHECK(name_hash("foobar") == 0xbf9cf968u);
  // The Python implementation in tools/jax_reference/make_init_vectors.py.
  for (const auto& v : tv::kParameterValues) CHECK(name_hash(v.name) == v.name_hash);
  // Bytes are unsigned: a UTF-8 name hashes its raw bytes.
  const char utf8[] = "h.0.\xc3\xa9";
  uint32_t h = 2166136261u;
  for (size_t i = 0; i + 1 < sizeof utf8; ++i) h = (h ^ static_cast<unsigned char>(utf8[i])) * 16777619u;
  CHECK(name_hash(utf8) == h);
}

TEST_CASE("parameter_key is fold_in(key(seed), fnv1a32(name)) and separates names and seeds", "[random][threefry]") {
  CHECK(parameter_key(7, "h.11.mlp.c_proj.weight") == fold_in(key_from_seed(7), 0x891aef97u));
  std::mt19937_64 rng(Catch::rngSeed());
  const uint64_t seed = rng();
  CHECK_FALSE(parameter_key(seed, "wte.weight") == parameter_key(seed, "wpe.weight"));
  CHECK_FALSE(parameter_key(seed, "wte.weight") == parameter_key(seed + 1, "wte.weight"));
  CHECK(parameter_key(seed, "wte.weight") == parameter_key(seed, "wte.weight"));
}
