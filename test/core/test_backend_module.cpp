// Backends loaded at run time, on a machine without a GPU: this binary runs with
// EAGERLM_CUDA_MODULE naming the loopback module (loopback_backend_module.cpp), which serves
// Device::kCuda with host memory and the CPU's kernels. Everything the model does on a device
// then goes through the module machinery, and must give the CPU's results bit for bit.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "engine/core/backend.h"
#include "engine/core/device.h"
#include "engine/core/error.h"
#include "engine/generation/generator.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/cpu/cpu_ops.h"
#include "models/gpt2/forward.h"
#include "models/gpt2/gpt2_step_model.h"
#include "models/gpt2/initializer.h"
#include "models/gpt2/model.h"
#include "test/models/test_models_util.h"

using namespace eagerlm;

namespace {

std::vector<float> host_copy(const Tensor& t) {
  std::vector<float> out(size_t(t.numel()));
  device_copy(out.data(), Device::kCpu, t.raw(), t.device(), t.nbytes());
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("the module is found through EAGERLM_CUDA_MODULE and serves the device", "[backend][module]") {
  INFO(cuda_unavailable_reason());
  REQUIRE(cuda_available());
  CHECK(backend_for(Device::kCuda).device() == Device::kCuda);
  Tensor t = Tensor::zeros({3, 5}, DType::kF32, Device::kCuda);
  CHECK(t.device() == Device::kCuda);
  const std::vector<float> ones(15, 1.0f);
  device_copy(t.raw(), Device::kCuda, ones.data(), Device::kCpu, 15 * sizeof(float));
  CHECK(host_copy(t) == ones);
}

TEST_CASE("a model on the module's device computes the CPU's logits bit for bit", "[backend][module]") {
  const gpt2::Config c = test::tiny_config(2, 48, 3, 40, 97);
  auto cpu = gpt2::Model::from_parameters(c, test::random_parameters(c, 5), Device::kCpu);
  auto dev = gpt2::Model::from_parameters(c, test::random_parameters(c, 5), Device::kCuda);
  gpt2::ForwardLimits lim;
  lim.max_slots = 2;
  lim.max_step_rows = 16;
  gpt2::ForwardPass on_cpu(cpu, lim), on_dev(dev, lim);
  const std::vector<int32_t> a = {1, 2, 3, 4, 5, 6, 7}, b = {9, 8};
  const std::vector<SequenceStep> prefill = {{0, 0, a.data(), 7}, {1, 0, b.data(), 2}};
  CHECK(same_bits(host_copy(on_dev.step(prefill, gpt2::LogitsFor::kLastToken)),
                  host_copy(on_cpu.step(prefill, gpt2::LogitsFor::kLastToken))));
  const int32_t next[2] = {11, 12};
  const std::vector<SequenceStep> decode = {{0, 7, &next[0], 1}, {1, 2, &next[1], 1}};
  CHECK(same_bits(host_copy(on_dev.step(decode, gpt2::LogitsFor::kLastToken)),
                  host_copy(on_cpu.step(decode, gpt2::LogitsFor::kLastToken))));
}

TEST_CASE("generation and initialization on the module's device equal the CPU's", "[backend][module]") {
  const gpt2::Config c = test::tiny_config(2, 48, 3, 64, 50257);
  gpt2::InitOptions init;
  init.seed = 3;
  const uint64_t cpu_sum = gpt2::parameters_checksum(gpt2::initialize(c, init));
  init.device = Device::kCuda;
  CHECK(gpt2::parameters_checksum(gpt2::initialize(c, init)) == cpu_sum);

  const Tokenizer tok = Tokenizer::gpt2();
  GenerationOptions o;
  o.max_new_tokens = 10;
  o.sampling.temperature = 0.9f;
  o.sampling.seed = 7;
  o.logprobs = true;
  const std::vector<std::vector<int32_t>> prompts = {{464, 3290, 318}, {40}};
  auto run = [&](Device device) {
    auto model = gpt2::Model::from_parameters(c, test::random_parameters(c, 9), device);
    gpt2::ForwardLimits lim;
    lim.max_slots = 2;
    gpt2::Gpt2StepModel step(model, lim);
    return GenerationLoop(step, tok).generate(prompts, o);
  };
  const auto on_cpu = run(Device::kCpu), on_dev = run(Device::kCuda);
  for (size_t i = 0; i < prompts.size(); ++i) {
    CHECK(on_dev[i].ids == on_cpu[i].ids);
    CHECK(on_dev[i].logprobs == on_cpu[i].logprobs);
  }
}

TEST_CASE("errors raised inside the module arrive as eagerlm::Error", "[backend][module]") {
  // The CPU queue (here inside the module) refuses graphs and tensor-core math with kUnsupported.
  auto queue = backend_for(Device::kCuda).create_queue();
  try {
    queue->record([] {});
    FAIL("record() should have thrown");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kUnsupported);
  }
  CHECK_THROWS_AS(queue->set_gemm_math(GemmMath::kTf32, WeightType::kF32), Error);
}

TEST_CASE("the CPU queue offers bf16 math for bf16 weights where its kernels have a bf16 GEMM", "[backend]") {
  auto queue = backend_for(Device::kCpu).create_queue();
  for (const WeightType w : {WeightType::kF32, WeightType::kF16, WeightType::kInt8}) {
    INFO(weight_type_name(w));
    CHECK_THROWS_AS(queue->set_gemm_math(GemmMath::kBf16, w), Error);
    CHECK_NOTHROW(queue->set_gemm_math(GemmMath::kFp32, w));
  }
  INFO("variant " << cpu::active_isa());
  if (cpu::has_bf16_gemm())
    CHECK_NOTHROW(queue->set_gemm_math(GemmMath::kBf16, WeightType::kBF16));
  else
    CHECK_THROWS_AS(queue->set_gemm_math(GemmMath::kBf16, WeightType::kBF16), Error);
}
