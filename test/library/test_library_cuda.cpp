// The public API on a GPU (CUDA builds only): the same model initialized on the CPU and on CUDA
// gives the same logits (within float32 tolerance) and the same greedy text, through C++ and C,
// and generators in several threads share one CUDA model. Without a usable GPU the binary exits
// with 77, which CTest reports as skipped.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <eagerlm/eagerlm.h>
#include <eagerlm/eagerlm.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cuda/cuda_ops.h"
#include "test/library/library_test_support.h"
#include "test/reference/target_logprobs.h"
#include "test/support/tolerance.h"

using namespace eagerlm;

namespace {

// The tiny model on both devices, from the same config file and seed (so the same weights: the
// initializer is bit-identical on CPU and CUDA).
struct BothDevices {
  BothDevices() : cpu(init(Device::kCpu)), cuda(init(Device::kCuda)) {}
  static Model init(Device d) {
    test::TempDir dir;
    test::write_file((dir / "config.json"), test::tiny_config_json());
    return Model::initialize((dir / "config.json"), 7, d);
  }
  Model cpu, cuda;
};

const BothDevices& models() {
  static const BothDevices m;
  return m;
}

}  // namespace

TEST_CASE("CUDA logits match the CPU's", "[library][cuda]") {
  CHECK(models().cuda.info().device == Device::kCuda);
  const std::vector<std::vector<int32_t>> batch = {{464, 3290, 318, 257, 1332}, {15496}, {1, 2, 3}};
  const auto cpu = models().cpu.logits_batch(batch);
  const auto gpu = models().cuda.logits_batch(batch);
  REQUIRE(gpu.size() == cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    REQUIRE(gpu[i].size() == cpu[i].size());
    // Both are float32 with different summation orders (cuBLAS and the CUDA kernels vs OpenBLAS):
    // sums of at most 256 products differ by ~256·2^-24 relative; 1e-4 of the scale is a margin.
    float worst = 0, scale = 1;
    for (size_t k = 0; k < cpu[i].size(); ++k) {
      scale = std::max(scale, std::abs(cpu[i][k]));
      const float e = std::abs(cpu[i][k] - gpu[i][k]);
      if (!(e <= worst)) worst = e;
    }
    INFO("sequence " << i << ": worst " << worst << " of scale " << scale);
    CHECK(worst <= 1e-4f * scale);
  }
}

TEST_CASE("CUDA scores match the CPU's", "[library][cuda][score]") {
  const std::vector<std::vector<int32_t>> batch = {{464, 3290, 318, 257, 1332}, {15496}, {1, 2, 3}};
  const auto cpu = models().cpu.score_batch(batch);
  const auto gpu = models().cuda.score_batch(batch);
  const auto logits = models().cpu.logits_batch(batch);
  const auto vocab = int64_t(models().cpu.info().vocab_size);
  REQUIRE(gpu.size() == cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    REQUIRE(gpu[i].size() == cpu[i].size());
    // log p(t) = z_t - log Σ exp(z) moves by at most twice the logits' difference (the test above:
    // 1e-4 of the sequence's scale), plus each device's log-sum-exp rounding, bounded from the
    // vocabulary and the row's logit spread (test/reference/target_logprobs.h).
    float scale = 1;
    for (const float z : logits[i]) scale = std::max(scale, std::abs(z));
    for (size_t t = 0; t < cpu[i].size(); ++t) {
      const float* z = logits[i].data() + t * size_t(vocab);
      const auto [lo, hi] = std::minmax_element(z, z + vocab);
      const double rounding =
          reference::cpu_logprob_rounding(vocab, double(*hi - *lo), cpu::kTargetLogprobBlock) +
          reference::cuda_logprob_rounding(vocab, double(*hi - *lo), cuda::kTargetLogprobBlock,
                                           cuda::kTargetLogprobThreads);
      const double bound = 2 * 1e-4 * scale + test::kFirstOrderMargin * rounding * test::kFloatEps;
      INFO("sequence " << i << " token " << t + 1 << ": cuda " << gpu[i][t] << ", cpu " << cpu[i][t] << ", allowed "
                       << bound);
      CHECK(std::abs(double(gpu[i][t]) - double(cpu[i][t])) <= bound);
    }
  }
}

TEST_CASE("CUDA greedy generation gives the CPU's text, in C++ and in C", "[library][cuda]") {
  GenerateOptions o;
  o.max_new_tokens = 24;
  o.ignore_eos = true;
  Generator on_cpu(models().cpu, 2, 64), on_gpu(models().cuda, 2, 64);
  const std::vector<std::string> prompts = {"The meaning of life is", "Hello"};
  const auto want = on_cpu.generate_batch(prompts, o);
  const auto got = on_gpu.generate_batch(prompts, o);
  for (size_t i = 0; i < prompts.size(); ++i) CHECK(got[i].ids == want[i].ids);

  test::TempDir dir;
  test::write_file((dir / "config.json"), test::tiny_config_json());
  eagerlm_model* m = nullptr;
  eagerlm_generator* g = nullptr;
  eagerlm_options* opts = nullptr;
  eagerlm_result* r = nullptr;
  REQUIRE(eagerlm_model_initialize((dir / "config.json").c_str(), 7, EAGERLM_DEVICE_CUDA, &m) == EAGERLM_OK);
  REQUIRE(eagerlm_generator_create(m, 1, 64, &g) == EAGERLM_OK);
  REQUIRE(eagerlm_options_create(&opts) == EAGERLM_OK);
  REQUIRE(eagerlm_options_set(opts, "max_new_tokens", "24") == EAGERLM_OK);
  REQUIRE(eagerlm_options_set(opts, "ignore_eos", "true") == EAGERLM_OK);
  const char* prompt = prompts[0].c_str();
  REQUIRE(eagerlm_generate(g, &prompt, nullptr, 1, opts, nullptr, nullptr, &r) == EAGERLM_OK);
  char text[1024];
  size_t size = 0;
  REQUIRE(eagerlm_result_text(r, 0, text, sizeof text, &size) == EAGERLM_OK);
  CHECK(std::string(text, size) == want[0].text);
  eagerlm_result_free(r);
  eagerlm_options_free(opts);
  eagerlm_generator_free(g);
  eagerlm_model_free(m);
}

TEST_CASE("one CUDA model, three generators in three threads", "[library][cuda][threads]") {
  GenerateOptions o;
  o.max_new_tokens = 16;
  o.ignore_eos = true;
  o.temperature = 0.9f;
  const std::vector<std::string> prompts = {"One", "Two words", "Three words here"};
  std::vector<std::vector<int32_t>> sequential(3), parallel(3);
  for (size_t t = 0; t < 3; ++t) {
    o.seed = t;
    sequential[t] = Generator(models().cuda, 1, 64).generate(prompts[t], o).ids;
  }
  std::vector<std::string> errors(3);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 3; ++t)
    threads.emplace_back([&, t, opts = o] {
      try {
        GenerateOptions mine = opts;
        mine.seed = t;
        Generator gen(models().cuda, 1, 64);
        for (int round = 0; round < 3; ++round) parallel[t] = gen.generate(prompts[t], mine).ids;
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  CHECK(errors == std::vector<std::string>(3));
  CHECK(parallel == sequential);
}

int main(int argc, char* argv[]) {
  if (!eagerlm::cuda_available()) {
    std::printf("no usable CUDA device: skipped\n");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
