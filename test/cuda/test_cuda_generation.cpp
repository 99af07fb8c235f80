// Whole-model generation with sampling on the device against the same CUDA model sampled on the
// host. Part of test_cuda_model, through the CUDA module like any user.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "engine/core/error.h"
#include "engine/generation/generator.h"
#include "engine/tokenizer/tokenizer.h"
#include "models/gpt2/gpt2_step_model.h"
#include "test/models/test_models_util.h"

using namespace eagerlm;

namespace {

// The same Gpt2StepModel, sampled on the host: only step() and copy_prefix() are passed through.
class HostSampled : public StepModel {
 public:
  explicit HostSampled(gpt2::Gpt2StepModel& m) : m_(m) {}
  int64_t vocab_size() const override { return m_.vocab_size(); }
  int64_t max_slots() const override { return m_.max_slots(); }
  int64_t max_len() const override { return m_.max_len(); }
  int64_t max_step_rows() const override { return m_.max_step_rows(); }
  const float* step(const std::vector<SequenceStep>& s) override { return m_.step(s); }
  void copy_prefix(int32_t src, int32_t dst, int32_t n) override { m_.copy_prefix(src, dst, n); }

 private:
  gpt2::Gpt2StepModel& m_;
};

}  // namespace

// Greedy generation with a repetition penalty, a ragged batch and chunked prefill: device
// sampling must give exactly the ids host sampling gives on the very same CUDA logits, and
// logprobs within 1e-5 (see above). Sampled generation is reproducible for a seed.
TEST_CASE("cuda generation with device sampling matches host sampling of the same model", "[cuda][sampling][model]") {
  const gpt2::Config config = test::tiny_config();
  auto model = gpt2::Model::from_parameters(config, test::random_parameters(config, 17), Device::kCuda);
  gpt2::ForwardLimits limits;
  limits.max_slots = 3;
  limits.max_len = 64;
  limits.max_step_rows = 6;
  gpt2::Gpt2StepModel device_model(model, limits);
  REQUIRE(device_model.samples_on_device());
  HostSampled host_model(device_model);
  const Tokenizer tok = Tokenizer::gpt2();
  const std::vector<std::vector<int32_t>> prompts = {{1, 2, 3, 4, 5, 6, 7, 8, 9}, {42}, {7, 7, 7, 7}};

  GenerationOptions o;
  o.max_new_tokens = 24;
  o.ignore_eos = true;
  o.logprobs = true;
  o.sampling.repetition_penalty = 1.3f;
  const auto on_device = GenerationLoop(device_model, tok).generate(prompts, o);
  const auto on_host = GenerationLoop(host_model, tok).generate(prompts, o);
  for (size_t i = 0; i < prompts.size(); ++i) {
    INFO("prompt " << i);
    CHECK(on_device[i].ids == on_host[i].ids);
    REQUIRE(on_device[i].logprobs.size() == on_host[i].logprobs.size());
    for (size_t k = 0; k < on_host[i].logprobs.size(); ++k)
      CHECK(std::fabs(on_device[i].logprobs[k] - on_host[i].logprobs[k]) <= 1e-5f);
  }

  o.sampling.temperature = 2.0f;
  o.sampling.top_p = 0.95f;
  o.sampling.repetition_penalty = 1.2f;
  o.sampling.seed = 123;
  const auto a = GenerationLoop(device_model, tok).generate(prompts, o);
  const auto b = GenerationLoop(device_model, tok).generate(prompts, o);
  o.sampling.seed = 124;
  const auto c = GenerationLoop(device_model, tok).generate(prompts, o);
  bool any_differs = false;
  for (size_t i = 0; i < prompts.size(); ++i) {
    CHECK(a[i].ids == b[i].ids);
    any_differs = any_differs || a[i].ids != c[i].ids;
  }
  CHECK(any_differs);

  // A slot fed through step() (not step_and_sample) has no device history of its tokens, which
  // the scheduler checks (device_history) before penalizing on the device.
  const int32_t first = 1;
  device_model.step({{0, 0, &first, 1}});
  const int32_t next = 2;
  SampleRequest penalized;
  penalized.options = &o.sampling;
  CHECK_THROWS_AS(device_model.step_and_sample({{0, 1, &next, 1}}, {penalized}), Error);
}
