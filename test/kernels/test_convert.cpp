// convert_to_f32 / convert_from_f32 against dtype.h's scalar conversions, bit for bit: every
// one of the 65536 halves both ways (bf16 and f16: denormals, infinities, NaN payloads), and
// float32 edge values (denormals, ties, the f16 overflow boundary, NaNs of every kind) plus random
// bit patterns; at unaligned addresses, at lengths that are not whole vector groups, and large
// enough to be split across threads.
#include <catch2/catch.hpp>

#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/common/dtype.h"
#include "kernels/cpu/cpu_ops.h"
#include "test/support/random.h"

namespace test = eagerlm::test;
using eagerlm::DType;

namespace {

// The halves at an odd byte offset (checkpoint data need not be aligned).
struct OddBytes {
  std::vector<unsigned char> bytes;
  explicit OddBytes(size_t n) : bytes(2 * n + 1, 0xAB) {}
  void* data() { return bytes.data() + 1; }
  uint16_t at(size_t i) const {
    uint16_t v;
    std::memcpy(&v, bytes.data() + 1 + 2 * i, 2);
    return v;
  }
};

std::vector<float> edge_floats(std::mt19937& rng, size_t n_random) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f,
                          -0.0f,
                          inf,
                          -inf,
                          1.0f,
                          -1.0f,
                          65504.0f,
                          65519.99f,
                          65520.0f,
                          -65520.0f,
                          6.1035156e-05f,  // smallest normal half
                          5.9604645e-08f,  // smallest half denormal
                          2.9802322e-08f,  // half of it (a tie to 0)
                          2.9802326e-08f,
                          1e-40f,
                          -1e-45f,
                          std::numeric_limits<float>::denorm_min(),
                          std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::min()};
  for (const uint32_t bits : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fa00000u, 0xff812345u, 0x7fffffffu, 0x3f808000u,
                              0x3f818000u, 0x3f80c000u, 0x477fefffu, 0x477ff000u, 0x38800000u}) {
    v.push_back(eagerlm::bits_float(bits));  // NaNs (quiet, signaling, payloads), bf16 ties, f16 boundaries
  }
  std::uniform_int_distribution<uint32_t> any;
  while (v.size() < n_random) v.push_back(eagerlm::bits_float(any(rng)));
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("halves widen to float32 as dtype.h does, every bit pattern", "[kernels][convert]") {
  const size_t n = 65536 + 13;  // every half, then a tail shorter than a vector group
  OddBytes h(n);
  for (size_t i = 0; i < n; ++i) {
    const auto v = uint16_t(i);
    std::memcpy(h.bytes.data() + 1 + 2 * i, &v, 2);
  }
  for (const DType t : {DType::kBF16, DType::kF16}) {
    std::vector<float> got(n), want(n);
    eagerlm::cpu::convert_to_f32(h.data(), t, got.data(), int64_t(n));
    for (size_t i = 0; i < n; ++i)
      want[i] = t == DType::kBF16 ? eagerlm::bf16_to_float(h.at(i)) : eagerlm::f16_to_float(h.at(i));
    CHECK(same_bits(got, want));
  }
}

TEST_CASE("float32 narrows to halves as dtype.h does", "[kernels][convert]") {
  auto rng = test::test_rng(321);
  // Large enough to be split over threads, and not a whole number of vector groups.
  const std::vector<float> src = edge_floats(rng, (size_t(1) << 19) + 7);
  const size_t n = src.size();
  for (const DType t : {DType::kBF16, DType::kF16}) {
    INFO((t == DType::kBF16 ? "bf16" : "f16"));
    OddBytes out(n);
    eagerlm::cpu::convert_from_f32(src.data(), t, out.data(), int64_t(n));
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint16_t want = t == DType::kBF16 ? eagerlm::float_to_bf16(src[i]) : eagerlm::float_to_f16(src[i]);
      if (out.at(i) != want && bad++ == 0) first = i;
    }
    INFO("first difference at " << first << ": float bits " << std::hex << eagerlm::float_bits(src[first]));
    CHECK(bad == 0);
    CHECK(out.bytes[0] == 0xAB);  // nothing written before the buffer
  }
}

TEST_CASE("float32 to float32 and I32 conversions copy and convert by value", "[kernels][convert]") {
  auto rng = test::test_rng(322);
  const std::vector<float> src = test::random_floats(rng, (size_t(1) << 18) + 5, -1e6f, 1e6f);
  std::vector<float> copy(src.size());
  eagerlm::cpu::convert_from_f32(src.data(), DType::kF32, copy.data(), int64_t(src.size()));
  CHECK(same_bits(copy, src));
  std::vector<float> back(src.size());
  eagerlm::cpu::convert_to_f32(copy.data(), DType::kF32, back.data(), int64_t(src.size()));
  CHECK(same_bits(back, src));
  const std::vector<int32_t> ids = {0, -7, 123456789, 50256};
  std::vector<float> f(ids.size());
  eagerlm::cpu::convert_to_f32(ids.data(), DType::kI32, f.data(), int64_t(ids.size()));
  for (size_t i = 0; i < ids.size(); ++i) CHECK(f[i] == float(ids[i]));
}
