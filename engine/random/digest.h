// A fast, documented digest of large byte sequences (model parameters), so that two runs, two
// thread counts or two devices can be compared by one 64-bit number.
//
// Definition ("eagerlm blocked XXH64"): split each piece, in order, into blocks of kDigestBlock
// bytes (the last block of a piece may be shorter; an empty piece has no blocks); hash each block
// with XXH64 (seed 0); the digest is XXH64 (seed 0) of the concatenated 8-byte little-endian
// block hashes. In Python (package xxhash):
//   xxh64(b"".join(struct.pack("<Q", xxh64(block).intdigest()) for block in blocks)).intdigest()
// Blocks are hashed in parallel, so the digest runs at memory bandwidth.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace eagerlm::rng {

constexpr size_t kDigestBlock = size_t{4} << 20;  // 4 MiB

// XXH64 (Yann Collet's xxHash, 64-bit variant) of `size` bytes.
uint64_t xxh64(const void* data, size_t size, uint64_t seed = 0);

// Accumulates pieces in order; finish() returns the blocked XXH64 digest of all of them.
class BlockedDigest {
 public:
  void add(const void* data, size_t size);  // hashes the piece's blocks in parallel
  uint64_t finish() const;

 private:
  std::vector<unsigned char> block_hashes_;  // little-endian XXH64 of each block so far
};

}  // namespace eagerlm::rng
