// XXH64 and the blocked digest against values from the Python xxhash package (4.1.0), the
// reference implementation's bindings.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "engine/random/digest.h"

using namespace eagerlm::rng;

namespace {
std::vector<unsigned char> pattern(size_t n) {  // byte i = (7i + 3) mod 256
  std::vector<unsigned char> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<unsigned char>(7 * i + 3);
  return bytes;
}
std::vector<unsigned char> iota_bytes(size_t n) {  // byte i = i
  std::vector<unsigned char> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<unsigned char>(i);
  return bytes;
}
}  // namespace

TEST_CASE("xxh64 matches the reference implementation", "[random][digest]") {
  CHECK(xxh64("", 0) == 0xef46db3751d8e999ull);
  CHECK(xxh64("a", 1) == 0xd24ec4f1a98c6e5bull);
  CHECK(xxh64("abc", 3) == 0x44bc2cf5ad770999ull);
  CHECK(xxh64("abc", 3, 12345) == 0x1700e64f6f23509ull);
  // Lengths around the 32-byte stripe and the 8/4/1-byte tails.
  CHECK(xxh64(iota_bytes(7).data(), 7) == 0x14cc643f630c72d2ull);
  CHECK(xxh64(iota_bytes(31).data(), 31) == 0xc346d2b59b4d8ee1ull);
  CHECK(xxh64(iota_bytes(32).data(), 32) == 0xcbf59c5116ff32b4ull);
  CHECK(xxh64(iota_bytes(100).data(), 100) == 0x6ac1e58032166597ull);
  CHECK(xxh64(pattern(1000).data(), 1000) == 0x5f235fa033f1a3fbull);
}

TEST_CASE("BlockedDigest matches the documented definition", "[random][digest]") {
  // Pieces of 5,000,000, 4 MiB + 1000, 0 and 17 bytes, consecutive slices of the pattern: five
  // blocks in all. Expected value computed with xxhash in Python as digest.h describes.
  const std::vector<size_t> sizes = {5000000, (size_t(4) << 20) + 1000, 0, 17};
  const std::vector<unsigned char> bytes = pattern(20000000);
  BlockedDigest digest;
  size_t at = 0;
  for (size_t size : sizes) {
    digest.add(bytes.data() + at, size);
    at += size;
  }
  CHECK(digest.finish() == 0x4342b9d9d593c7bfull);

  // Any changed byte changes the digest.
  std::vector<unsigned char> changed(bytes.begin(), bytes.begin() + long(at));
  changed[6000000] ^= 1;
  BlockedDigest other;
  size_t pos = 0;
  for (size_t size : sizes) {
    other.add(changed.data() + pos, size);
    pos += size;
  }
  CHECK(other.finish() != 0x4342b9d9d593c7bfull);
}
