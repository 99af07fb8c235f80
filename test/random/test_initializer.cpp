// gpt2::initialize end to end: layout for every preset, per-tensor statistics, values against the
// per-element definition and against JAX, determinism, dtypes, progress, errors, checksum.
#include <catch2/catch.hpp>

#include "kernels/common/openmp.h"

#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "engine/core/error.h"
#include "engine/random/digest.h"
#include "kernels/common/random/normal.h"
#include "models/gpt2/initializer.h"
#include "test/random/float_ulp.h"
#include "test/random/jax_vectors.h"

using namespace eagerlm;
using namespace eagerlm::gpt2;
namespace tv = eagerlm::test_vectors;

namespace {

Config tiny_config() {  // odd sizes everywhere
  Config c;
  c.n_layer = 3;
  c.n_embd = 36;
  c.n_head = 6;
  c.n_positions = 17;
  c.vocab_size = 1001;
  c.n_inner = 50;
  c.eos_token_id = 1000;
  return c;
}

ParameterTensors init(const Config& c, uint64_t seed, DType dtype = DType::kF32) {
  InitOptions options;
  options.seed = seed;
  options.dtype = dtype;
  return initialize(c, options);
}

ErrorCode error_code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  FAIL("no eagerlm::Error thrown");
  return ErrorCode::kInternal;
}

void check_layout(const ParameterTensors& p, DType dtype) {
  REQUIRE(p.specs.size() == p.tensors.size());
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  for (size_t i = 0; i < p.specs.size(); ++i) {
    const Tensor& t = p.tensors[i];
    INFO(p.specs[i].name);
    CHECK(t.shape() == p.specs[i].shape);
    CHECK(t.dtype() == dtype);
    CHECK(t.device() == Device::kCpu);
    CHECK(t.is_contiguous());
    CHECK(reinterpret_cast<uintptr_t>(t.raw()) % 64 == 0);
    ranges.push_back({reinterpret_cast<uintptr_t>(t.raw()), reinterpret_cast<uintptr_t>(t.raw()) + t.nbytes()});
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) CHECK(ranges[i - 1].second <= ranges[i].first);
}

// Checks every tensor's values: normal ones against the per-element definition at sampled
// indices plus their mean and variance; constant ones exactly.
void check_values(const ParameterTensors& p, uint64_t seed) {
  std::mt19937_64 rng(Catch::rngSeed());
  for (size_t i = 0; i < p.specs.size(); ++i) {
    const ParameterSpec& spec = p.specs[i];
    const float* v = p.tensors[i].f32();
    const int64_t n = p.tensors[i].numel();
    INFO(spec.name);
    if (spec.init == InitKind::kOnes || spec.init == InitKind::kZeros) {
      const float expected = spec.init == InitKind::kOnes ? 1.0f : 0.0f;
      CHECK(std::count(v, v + n, expected) == n);
      continue;
    }
    const rng::Key key = rng::parameter_key(seed, spec.name);
    for (int64_t index : {int64_t(0), n / 2, n - 1, int64_t(rng() % uint64_t(n))})
      CHECK(v[index] == rng::scaled_normal_at(key, uint64_t(index), float(spec.stddev)));
    // Mean within 5 standard errors (σ/√n); variance within 5·σ²·√(2/n).
    double sum = 0, sum_sq = 0;
    for (int64_t j = 0; j < n; ++j) {
      sum += v[j];
      sum_sq += double(v[j]) * v[j];
    }
    const double mean = sum / double(n), variance = sum_sq / double(n) - mean * mean, s = spec.stddev;
    CHECK(std::fabs(mean) < 5 * s / std::sqrt(double(n)));
    CHECK(std::fabs(variance / (s * s) - 1) < 5 * std::sqrt(2.0 / double(n)));
  }
}

}  // namespace

TEST_CASE("every preset's parameters have the published sizes", "[initializer]") {
  const std::map<std::string, int64_t> published = {
      {"gpt2", 124439808}, {"gpt2-medium", 354823168}, {"gpt2-large", 774030080}, {"gpt2-xl", 1557611200}};
  for (const auto& [name, count] : published) {
    INFO(name);
    const auto specs = parameter_specs(preset(name));
    CHECK(total_parameter_bytes(specs, DType::kF32) == size_t(count) * 4);
    CHECK(total_parameter_bytes(specs, DType::kBF16) == size_t(count) * 2);
  }
}

TEST_CASE("gpt2 initializes with HF's scheme and JAX's numbers", "[initializer]") {
  const uint64_t seed = 1234;  // the seed of the JAX vector for h.0.attn.c_proj.weight
  const ParameterTensors p = init(preset("gpt2"), seed);
  check_layout(p, DType::kF32);
  CHECK(p.total_bytes() == size_t(124439808) * 4);
  check_values(p, seed);
  CHECK(p.get("h.0.attn.c_proj.weight").numel() == 768 * 768);
  for (const auto& v : tv::kParameterValues) {
    if (v.seed != seed) continue;
    INFO(v.name << " index " << v.index);
    CHECK(p.get(v.name).f32()[v.index] == test::float_from_bits(v.bits));
  }
}

TEST_CASE("larger presets initialize (slow: run with [large])", "[.][large][initializer]") {
  for (const char* name : {"gpt2-medium", "gpt2-large", "gpt2-xl"}) {
    INFO(name);
    const ParameterTensors p = init(preset(name), 5, DType::kBF16);
    check_layout(p, DType::kBF16);
  }
}

TEST_CASE("initialized values equal JAX's for the vectors' shapes and scales", "[initializer]") {
  // One config per JAX vector, chosen so that the named parameter has the vector's shape and
  // stddev: wte [50257, 768] with σ = 0.02; h.5.mlp.c_fc [64, 256] with σ = 0.02.
  Config wide = preset("gpt2");
  wide.n_layer = 1;
  wide.n_positions = 1;
  Config small = tiny_config();
  small.n_layer = 6;
  small.n_embd = 64;
  small.n_head = 4;
  small.n_inner = 0;
  const std::map<uint64_t, Config> config_for_seed = {{0, wide}, {3, small}};
  for (const auto& [seed, config] : config_for_seed) {
    const ParameterTensors p = init(config, seed);
    for (const auto& v : tv::kParameterValues) {
      if (v.seed != seed) continue;
      INFO(v.name << " index " << v.index);
      REQUIRE(p.get(v.name).numel() > int64_t(v.index));
      CHECK(p.get(v.name).f32()[v.index] == test::float_from_bits(v.bits));
    }
  }
}

TEST_CASE("odd configs initialize with correct shapes and statistics", "[initializer]") {
  const uint64_t seed = Catch::rngSeed();
  Config c = tiny_config();
  c.vocab_size = 40961;  // a tensor large enough for meaningful statistics and several threads
  const ParameterTensors p = init(c, seed);
  check_layout(p, DType::kF32);
  check_values(p, seed);
  CHECK(p.specs.size() == size_t(2 + 12 * c.n_layer + 2));
}

TEST_CASE("initialization is deterministic across runs and thread counts; seeds differ", "[initializer]") {
  const Config c = tiny_config();
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const ParameterTensors one = init(c, 99);
  omp_set_num_threads(3);
  const ParameterTensors three = init(c, 99);
  omp_set_num_threads(saved);
  const ParameterTensors again = init(c, 99);
  CHECK(parameters_checksum(one) == parameters_checksum(three));
  CHECK(parameters_checksum(one) == parameters_checksum(again));
  for (size_t i = 0; i < one.tensors.size(); ++i)
    CHECK(std::memcmp(one.tensors[i].raw(), three.tensors[i].raw(), one.tensors[i].nbytes()) == 0);
  const ParameterTensors other = init(c, 100);
  CHECK(parameters_checksum(other) != parameters_checksum(one));
  CHECK(other.get("wte.weight").f32()[0] != one.get("wte.weight").f32()[0]);
}

TEST_CASE("F16 and BF16 parameters are the F32 values rounded", "[initializer]") {
  const Config c = tiny_config();
  const ParameterTensors f32 = init(c, 7);
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    INFO(dtype_name(dtype));
    const ParameterTensors half = init(c, 7, dtype);
    check_layout(half, dtype);
    CHECK(half.total_bytes() == f32.total_bytes() / 2);
    for (size_t i = 0; i < f32.tensors.size(); ++i) {
      const float* src = f32.tensors[i].f32();
      const auto* got = half.tensors[i].data<uint16_t>();
      int64_t mismatches = 0;
      for (int64_t j = 0; j < f32.tensors[i].numel(); ++j)
        mismatches += got[j] != (dtype == DType::kF16 ? float_to_f16(src[j]) : float_to_bf16(src[j]));
      CHECK(mismatches == 0);
    }
    CHECK(parameters_checksum(half) != parameters_checksum(f32));
  }
}

TEST_CASE("progress reports climb to the total", "[initializer]") {
  Config c = tiny_config();
  c.vocab_size = 50257;
  c.n_embd = 384;
  c.n_head = 6;
  c.n_inner = 0;  // wte is 77 MB: several progress pieces
  std::vector<std::pair<size_t, size_t>> calls;
  InitOptions options;
  options.progress = [&](size_t done, size_t total) { calls.push_back({done, total}); };
  const ParameterTensors p = initialize(c, options);
  const size_t total = total_parameter_bytes(p.specs, DType::kF32);
  REQUIRE(calls.size() > 3);
  CHECK(calls.front().first == 0);
  CHECK(calls.back().first == total);
  for (size_t i = 0; i < calls.size(); ++i) {
    CHECK(calls[i].second == total);
    if (i) CHECK(calls[i].first >= calls[i - 1].first);
  }
}

TEST_CASE("bad requests fail before allocating, with the right error", "[initializer]") {
  Config bad = tiny_config();
  bad.n_head = 7;  // does not divide n_embd
  CHECK(error_code_of([&] { init(bad, 0); }) == ErrorCode::kInvalidFile);
  CHECK(error_code_of([&] { init(tiny_config(), 0, DType::kI32); }) == ErrorCode::kInvalidArgument);
  Config huge = preset("gpt2");
  huge.n_layer = 100;
  huge.n_embd = 8192;
  huge.n_head = 64;  // about 80 G parameters, 320 GB: more than any test machine has
  CHECK(error_code_of([&] { init(huge, 0); }) == ErrorCode::kOutOfMemory);
  if (!cuda_available()) {
    InitOptions options;
    options.device = Device::kCuda;
    CHECK(error_code_of([&] { initialize(tiny_config(), options); }) == ErrorCode::kUnsupported);
  }
}

TEST_CASE("parameters_checksum is the blocked digest of the tensors in spec order", "[initializer]") {
  ParameterTensors p = init(tiny_config(), 3);
  rng::BlockedDigest expected;
  for (const Tensor& t : p.tensors) expected.add(t.raw(), t.nbytes());
  const uint64_t checksum = parameters_checksum(p);
  CHECK(checksum == expected.finish());
  p.tensors.back().data<unsigned char>()[5] ^= 0x10;  // one bit of ln_f.bias
  CHECK(parameters_checksum(p) != checksum);
}
