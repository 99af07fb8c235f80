// JAX-compatible random bits: the threefry2x32 block cipher (20 rounds, Salmon et al. 2011, as
// JAX lowers it), JAX's key construction from a seed, jax.random.fold_in, and the per-element
// counters of JAX's "partitionable" threefry mode (the default since JAX 0.5.0). Every element
// of a tensor is a pure function of (key, flat index), so CPU threads, SIMD lanes and CUDA
// threads can each compute any element and all agree bit for bit.
//
// Integer arithmetic only, so there is nothing that could round differently between devices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kernels/common/host_device.h"

namespace eagerlm::rng {

// A raw threefry2x32 key: what jax.random.key_data(key) holds, [k0, k1].
struct Key {
  uint32_t k0 = 0;
  uint32_t k1 = 0;
  friend constexpr bool operator==(Key a, Key b) { return a.k0 == b.k0 && a.k1 == b.k1; }
};

// Two 32-bit words: a counter going into threefry2x32 or the block coming out.
struct Block {
  uint32_t x0 = 0;
  uint32_t x1 = 0;
};

EAGERLM_HOST_DEVICE constexpr uint32_t rotate_left(uint32_t x, uint32_t r) { return (x << r) | (x >> (32u - r)); }

namespace detail {
// Four Threefish mix rounds with the given rotation constants.
EAGERLM_HOST_DEVICE constexpr void threefry_rounds(uint32_t& x0, uint32_t& x1, uint32_t r0, uint32_t r1, uint32_t r2,
                                                   uint32_t r3) {
  x0 += x1;
  x1 = rotate_left(x1, r0);
  x1 ^= x0;
  x0 += x1;
  x1 = rotate_left(x1, r1);
  x1 ^= x0;
  x0 += x1;
  x1 = rotate_left(x1, r2);
  x1 ^= x0;
  x0 += x1;
  x1 = rotate_left(x1, r3);
  x1 ^= x0;
}
}  // namespace detail

// threefry2x32 with 20 rounds: key schedule (k0, k1, k0 ^ k1 ^ 0x1BD11BDA), rotations
// {13, 15, 26, 6} and {17, 29, 16, 24} alternating, a key injection after every 4 rounds.
// Matches Random123's threefry2x32_20 and JAX's threefry2x32 primitive.
EAGERLM_HOST_DEVICE constexpr Block threefry2x32(Key key, Block counter) {
  const uint32_t ks0 = key.k0, ks1 = key.k1, ks2 = key.k0 ^ key.k1 ^ 0x1BD11BDAu;
  uint32_t x0 = counter.x0 + ks0;
  uint32_t x1 = counter.x1 + ks1;
  detail::threefry_rounds(x0, x1, 13, 15, 26, 6);
  x0 += ks1;
  x1 += ks2 + 1u;
  detail::threefry_rounds(x0, x1, 17, 29, 16, 24);
  x0 += ks2;
  x1 += ks0 + 2u;
  detail::threefry_rounds(x0, x1, 13, 15, 26, 6);
  x0 += ks0;
  x1 += ks1 + 3u;
  detail::threefry_rounds(x0, x1, 17, 29, 16, 24);
  x0 += ks1;
  x1 += ks2 + 4u;
  detail::threefry_rounds(x0, x1, 13, 15, 26, 6);
  x0 += ks2;
  x1 += ks0 + 5u;
  return {x0, x1};
}

// jax.random.key(seed) for the threefry2x32 implementation: the 64-bit seed split into its high
// and low words. (With jax_enable_x64 off, JAX first truncates a seed to 32 bits, so the two
// agree for every seed below 2^32.)
EAGERLM_HOST_DEVICE constexpr Key key_from_seed(uint64_t seed) { return {uint32_t(seed >> 32), uint32_t(seed)}; }

// jax.random.fold_in(key, data): threefry2x32 of the counter (0, data), i.e. of the key JAX
// would make from `data` as a seed.
EAGERLM_HOST_DEVICE constexpr Key fold_in(Key key, uint32_t data) {
  const Block b = threefry2x32(key, {0u, data});
  return {b.x0, b.x1};
}

// 32 random bits for element `index` (row-major flat index) of any array drawn from `key`, as
// jax.random.bits / the float samplers get them in partitionable mode: the counter is the 64-bit
// index split into (high word, low word), and the two output words are XORed. Valid for every
// index below 2^64, so no tensor size needs a different scheme.
EAGERLM_HOST_DEVICE constexpr uint32_t random_bits32(Key key, uint64_t index) {
  const Block b = threefry2x32(key, {uint32_t(index >> 32), uint32_t(index)});
  return b.x0 ^ b.x1;
}

// FNV-1a, 32-bit (offset basis 2166136261, prime 16777619) over bytes: the stable hash that
// turns a parameter name (UTF-8) into the fold_in data.
EAGERLM_HOST_DEVICE constexpr uint32_t fnv1a32(const char* data, size_t size) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; ++i) {
    h ^= uint32_t(static_cast<unsigned char>(data[i]));
    h *= 16777619u;
  }
  return h;
}

constexpr uint32_t name_hash(std::string_view name) { return fnv1a32(name.data(), name.size()); }

// The key of a named parameter: fold_in(key(seed), FNV-1a-32(name)). Depends on nothing else,
// so values do not change with initialization order, thread count or device.
constexpr Key parameter_key(uint64_t seed, std::string_view name) {
  return fold_in(key_from_seed(seed), name_hash(name));
}

}  // namespace eagerlm::rng
