// eagerlm::padded_attention, the public face of the engine's attention kernel over a caller's
// cache: its layout and its rule for short sequences mapped onto the kernel exactly. The op must
// equal, bit for bit, the kernel (cpu::attention, itself tested against the double reference in
// test/kernels/test_attention.cpp) run on the same step as the engine would lay it out; queries
// before position 0 and sequences of length 0 give zeros; cache cells past each length hold NaN,
// so a stray read would show. Bad arguments are refused, naming what is wrong.
#include <catch2/catch.hpp>

#include <eagerlm/eagerlm.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/common/dtype.h"
#include "kernels/cpu/cpu_ops.h"
#include "test/support/random.h"

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct Shape {
  int64_t batch, new_tokens, heads, max_len, head_dim;
};

void check_case(const Shape& s, const std::vector<int32_t>& lengths, const char* type, uint32_t salt) {
  INFO("batch " << s.batch << " new_tokens " << s.new_tokens << " heads " << s.heads << " max_len " << s.max_len
                << " head_dim " << s.head_dim << " cache " << type);
  auto rng = eagerlm::test::test_rng(salt);
  const int64_t row = s.heads * s.head_dim, rows = s.batch * s.new_tokens;
  const int64_t cache_size = s.batch * s.heads * s.max_len * s.head_dim;
  const std::vector<float> q = eagerlm::test::random_floats(rng, size_t(rows * row), -2.0f, 2.0f);
  std::vector<float> k = eagerlm::test::random_floats(rng, size_t(cache_size), -1.0f, 1.0f);
  std::vector<float> v = eagerlm::test::random_floats(rng, size_t(cache_size), -1.0f, 1.0f);
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h)
      for (int64_t p = lengths[size_t(b)]; p < s.max_len; ++p)
        for (int64_t c = 0; c < s.head_dim; ++c) {
          const size_t at = size_t(((b * s.heads + h) * s.max_len + p) * s.head_dim + c);
          k[at] = kNaN;
          v[at] = kNaN;
        }
  const eagerlm::DType dtype = std::string(type) == "bf16" ? eagerlm::DType::kBF16
                               : std::string(type) == "f16" ? eagerlm::DType::kF16
                                                            : eagerlm::DType::kF32;
  std::vector<uint16_t> k_half(k.size()), v_half(v.size());
  for (size_t i = 0; i < k.size(); ++i) {
    k_half[i] = dtype == eagerlm::DType::kBF16 ? eagerlm::float_to_bf16(k[i]) : eagerlm::float_to_f16(k[i]);
    v_half[i] = dtype == eagerlm::DType::kBF16 ? eagerlm::float_to_bf16(v[i]) : eagerlm::float_to_f16(v[i]);
  }
  const void* kc = dtype == eagerlm::DType::kF32 ? static_cast<const void*>(k.data()) : k_half.data();
  const void* vc = dtype == eagerlm::DType::kF32 ? static_cast<const void*>(v.data()) : v_half.data();
  const float scale = 1.0f / std::sqrt(float(s.head_dim));

  std::vector<float> out(size_t(rows * row), 12345.0f);
  eagerlm::padded_attention(q.data(), kc, vc, type, lengths.data(), {s.batch, s.new_tokens, s.heads, s.max_len, s.head_dim},
                            scale, out.data());

  // What the engine's own step would be: sequence b's last min(T, length) rows at positions from
  // max(0, length - T), the kernel's qkv being q alone (row stride heads·head_dim).
  for (int64_t b = 0; b < s.batch; ++b) {
    const int64_t real = std::min<int64_t>(s.new_tokens, lengths[size_t(b)]);
    for (int64_t t = 0; t < s.new_tokens - real; ++t)
      for (int64_t c = 0; c < row; ++c) REQUIRE(out[size_t((b * s.new_tokens + t) * row + c)] == 0.0f);
    if (real == 0) continue;
    const int32_t slot = int32_t(b), start = int32_t(b * s.new_tokens + s.new_tokens - real), n_new = int32_t(real),
                  past = int32_t(lengths[size_t(b)] - real);
    eagerlm::StepBatch step;
    step.n_seq = 1;
    step.n_rows = int32_t(rows);
    step.slot = &slot;
    step.row_start = &start;
    step.n_new = &n_new;
    step.past_len = &past;
    std::vector<float> expected(size_t(rows * row), 0.0f);
    eagerlm::cpu::attention(q.data(), row, step, eagerlm::kv_layout(s.max_len, s.heads, s.head_dim, dtype), kc, vc,
                            scale, expected.data(), row);
    for (int64_t r = start; r < start + n_new; ++r)
      for (int64_t c = 0; c < row; ++c) {
        const size_t at = size_t(r * row + c);
        INFO("sequence " << b << " row " << r << " column " << c);
        REQUIRE(std::isfinite(out[at]));
        REQUIRE(out[at] == expected[at]);
      }
  }
}

}  // namespace

TEST_CASE("padded_attention is the engine's kernel on ragged lengths, including 0 and the full cache",
          "[library][attention]") {
  for (const char* type : {"f32", "bf16", "f16"}) {
    // Decode: one query per sequence; lengths 0, 1, a block boundary, the full cache.
    check_case({5, 1, 3, 130, 64}, {0, 1, 64, 65, 130}, type, 1);
    // Several queries per sequence (a prefill chunk), shorter sequences padded, an odd head_dim.
    check_case({4, 3, 2, 20, 7}, {3, 2, 0, 20}, type, 2);
  }
}

TEST_CASE("padded_attention refuses bad arguments, naming them", "[library][attention][errors]") {
  std::vector<float> q(2 * 4, 0.0f), cache(2 * 8 * 4, 0.0f), out(q.size());
  std::vector<int32_t> lengths = {3, 9};
  const eagerlm::PaddedAttentionShape shape{2, 1, 1, 8, 4};
  CHECK_THROWS_WITH(eagerlm::padded_attention(q.data(), cache.data(), cache.data(), "f32", lengths.data(), shape, 0.5f,
                                              out.data()),
                    Catch::Contains("lengths[1] = 9") && Catch::Contains("[0, 8]"));
  lengths = {-1, 2};
  CHECK_THROWS_WITH(eagerlm::padded_attention(q.data(), cache.data(), cache.data(), "f32", lengths.data(), shape, 0.5f,
                                              out.data()),
                    Catch::Contains("lengths[0] = -1"));
  lengths = {1, 2};
  CHECK_THROWS_WITH(eagerlm::padded_attention(q.data(), cache.data(), cache.data(), "i8", lengths.data(), shape, 0.5f,
                                              out.data()),
                    Catch::Contains("cache_type"));
  CHECK_THROWS_WITH(eagerlm::padded_attention(q.data(), cache.data(), cache.data(), "f32", lengths.data(),
                                              {2, 9, 1, 8, 4}, 0.5f, out.data()),
                    Catch::Contains("max_len >= new_tokens"));
  CHECK_THROWS_WITH(eagerlm::padded_attention(q.data(), nullptr, cache.data(), "f32", lengths.data(), shape, 0.5f,
                                              out.data()),
                    Catch::Contains("null"));
  try {
    eagerlm::padded_attention(q.data(), cache.data(), cache.data(), "f32", lengths.data(), {0, 1, 1, 8, 4}, 0.5f,
                              out.data());
    FAIL("no error");
  } catch (const eagerlm::Error& e) {
    CHECK(e.code() == eagerlm::ErrorCode::kInvalidArgument);
  }
}
