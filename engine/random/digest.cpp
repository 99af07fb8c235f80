// XXH64 written from its public specification, and the blocked digest built on it.
#include "engine/random/digest.h"

#include <cstring>

#include "kernels/cpu/parallel.h"

namespace eagerlm::rng {

namespace {

constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kPrime2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kPrime3 = 0x165667B19E3779F9ull;
constexpr uint64_t kPrime4 = 0x85EBCA77C2B2AE63ull;
constexpr uint64_t kPrime5 = 0x27D4EB2F165667C5ull;

inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// Little-endian loads (the machines we build for are little-endian; memcpy keeps it legal).
inline uint64_t load64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint32_t load32(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline uint64_t accumulate(uint64_t acc, uint64_t input) {
  acc += input * kPrime2;
  acc = rotl64(acc, 31);
  return acc * kPrime1;
}

inline uint64_t merge(uint64_t hash, uint64_t acc) {
  hash ^= accumulate(0, acc);
  return hash * kPrime1 + kPrime4;
}

}  // namespace

uint64_t xxh64(const void* data, size_t size, uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  const unsigned char* const end = p + size;
  uint64_t h;
  if (size >= 32) {
    uint64_t v1 = seed + kPrime1 + kPrime2, v2 = seed + kPrime2, v3 = seed, v4 = seed - kPrime1;
    const unsigned char* const last_stripe = end - 32;
    do {
      v1 = accumulate(v1, load64(p));
      v2 = accumulate(v2, load64(p + 8));
      v3 = accumulate(v3, load64(p + 16));
      v4 = accumulate(v4, load64(p + 24));
      p += 32;
    } while (p <= last_stripe);
    h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
    h = merge(h, v1);
    h = merge(h, v2);
    h = merge(h, v3);
    h = merge(h, v4);
  } else {
    h = seed + kPrime5;
  }
  h += uint64_t(size);
  for (; p + 8 <= end; p += 8) {
    h ^= accumulate(0, load64(p));
    h = rotl64(h, 27) * kPrime1 + kPrime4;
  }
  if (p + 4 <= end) {
    h ^= uint64_t(load32(p)) * kPrime1;
    h = rotl64(h, 23) * kPrime2 + kPrime3;
    p += 4;
  }
  for (; p < end; ++p) {
    h ^= uint64_t(*p) * kPrime5;
    h = rotl64(h, 11) * kPrime1;
  }
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

void BlockedDigest::add(const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  const int64_t blocks = int64_t((size + kDigestBlock - 1) / kDigestBlock);
  const size_t first = block_hashes_.size();
  block_hashes_.resize(first + 8 * size_t(blocks));
  unsigned char* out = block_hashes_.data() + first;
  cpu::parallel_for(blocks, [&](int64_t i) {
    const size_t offset = size_t(i) * kDigestBlock;
    const size_t length = size - offset < kDigestBlock ? size - offset : kDigestBlock;
    const uint64_t h = xxh64(bytes + offset, length);
    for (size_t b = 0; b < 8; ++b) out[8 * size_t(i) + b] = static_cast<unsigned char>(h >> (8 * b));
  });
}

uint64_t BlockedDigest::finish() const { return xxh64(block_hashes_.data(), block_hashes_.size()); }

}  // namespace eagerlm::rng
