// The random draws of device-side sampling: Philox4x32-10 (Salmon et al., "Parallel random
// numbers: as easy as 1, 2, 3", 2011), the counter-based generator behind cuRAND's
// curandStatePhilox4_32_10_t, written once as a pure function for the host and the device. Being
// stateless, a draw depends only on (seed, stream, draw number): the same seed gives the same
// tokens whatever the batch, and the CPU tests check the very words the kernel uses.
//
// Layout, identical to cuRAND's: key = (seed low word, seed high word); the 128-bit counter is
// (element block low, element block high, subsequence low, subsequence high). So draw n of
// stream s uses the words that `curand_init(seed, s, 4·n, &st); a = curand(&st);
// b = curand(&st);` returns (test/cuda checks this against curand_kernel.h on a GPU).
#pragma once

#include <cstdint>

#include "kernels/common/host_device.h"

namespace eagerlm::sampling {

struct PhiloxBlock {
  uint32_t x = 0, y = 0, z = 0, w = 0;
};

namespace detail {
constexpr uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;  // round multipliers
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;  // key schedule (Weyl)

EAGERLM_HOST_DEVICE constexpr PhiloxBlock philox_round(PhiloxBlock c, uint32_t k0, uint32_t k1) {
  const uint64_t p0 = uint64_t(kPhiloxM0) * c.x;
  const uint64_t p1 = uint64_t(kPhiloxM1) * c.z;
  return {uint32_t(p1 >> 32) ^ c.y ^ k0, uint32_t(p1), uint32_t(p0 >> 32) ^ c.w ^ k1, uint32_t(p0)};
}
}  // namespace detail

// Philox4x32 with 10 rounds; the key is bumped between rounds. Matches Random123's
// philox4x32_10 (its known-answer vectors are in the CPU tests) and cuRAND's
// curand_Philox4x32_10.
EAGERLM_HOST_DEVICE constexpr PhiloxBlock philox4x32_10(PhiloxBlock counter, uint32_t k0, uint32_t k1) {
  PhiloxBlock c = detail::philox_round(counter, k0, k1);
  for (int round = 1; round < 10; ++round) {
    k0 += detail::kPhiloxW0;
    k1 += detail::kPhiloxW1;
    c = detail::philox_round(c, k0, k1);
  }
  return c;
}

// The four words of Philox block `block` of subsequence `stream` under `seed`.
EAGERLM_HOST_DEVICE constexpr PhiloxBlock philox_stream_block(uint64_t seed, uint64_t stream, uint64_t block) {
  return philox4x32_10({uint32_t(block), uint32_t(block >> 32), uint32_t(stream), uint32_t(stream >> 32)},
                       uint32_t(seed), uint32_t(seed >> 32));
}

// Draw `draw` of stream `stream`: a uniform double in [0, 1) with 53 random bits, from the first
// two words of Philox block `draw` (a·2^32 + b, top 53 bits).
EAGERLM_HOST_DEVICE constexpr double philox_uniform(uint64_t seed, uint64_t stream, uint64_t draw) {
  const PhiloxBlock b = philox_stream_block(seed, stream, draw);
  const uint64_t bits = ((uint64_t(b.x) << 32) | uint64_t(b.y)) >> 11;
  return double(bits) * (1.0 / 9007199254740992.0);  // 2^-53
}

}  // namespace eagerlm::sampling
