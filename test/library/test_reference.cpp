// The public library against the double-precision GPT-2 reference (test/models/reference_gpt2.h),
// on weights drawn by the test itself (std::mt19937, not eagerlm's initializer) and written as a
// Hugging Face directory: Model::load, logits for a ragged batch big enough to be fed in several
// steps, and greedy generation, all through libeagerlm.so.
#include <catch2/catch.hpp>

#include <eagerlm/eagerlm.h>
#include <eagerlm/eagerlm.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "models/gpt2/checkpoint.h"
#include "test/library/library_test_support.h"
#include "test/models/reference_gpt2.h"
#include "test/models/test_models_util.h"

namespace {

// As in test/models/test_forward.cpp: float32 kernels accumulate rounding of about K·2^-24 per
// dot product (K ≤ 4·n_embd = 192, ~1e-5) through two blocks whose layer norms rescale by O(10);
// 2e-4 of the logit scale leaves a 10x margin, while a wrong row, position or sequence order
// moves logits by O(1).
constexpr double kTolerance = 2e-4;

struct SavedModel {
  SavedModel() : config(eagerlm::test::tiny_config(2, 48, 3, 80, 97)) {
    params = eagerlm::test::random_parameters(config, 2024);
    eagerlm::gpt2::save_checkpoint(dir.str(), config, params);
  }
  eagerlm::test::TempDir dir;
  eagerlm::gpt2::Config config;
  eagerlm::gpt2::ParameterTensors params;
};

std::vector<int32_t> random_tokens(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t(n);
  for (auto& x : t) x = int32_t(rng() % 97);
  return t;
}

}  // namespace

TEST_CASE("library logits of a ragged batch, fed in chunks, match the reference", "[library][reference]") {
  SavedModel saved;
  const eagerlm::Model model = eagerlm::Model::load(saved.dir.str());
  CHECK(model.info().vocab_size == 97);
  CHECK(model.info().source == saved.dir.str());
  eagerlm::reference::Gpt2Reference ref(saved.config, saved.params);

  // 553 tokens: more than the 512 rows of one step, so sequences are split across steps.
  const std::vector<size_t> lengths = {80, 3, 80, 80, 1, 80, 80, 70, 79};
  std::vector<std::vector<int32_t>> batch;
  for (size_t i = 0; i < lengths.size(); ++i) batch.push_back(random_tokens(lengths[i], uint32_t(100 + i)));
  const auto got = model.logits_batch(batch);
  REQUIRE(got.size() == batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    const auto want = ref.logits(batch[i]);
    REQUIRE(got[i].size() == lengths[i] * 97);
    double worst = 0, scale = 1;
    for (size_t t = 0; t < lengths[i]; ++t)
      for (size_t v = 0; v < 97; ++v) {
        scale = std::max(scale, std::abs(want[t][v]));
        const double e = std::abs(double(got[i][t * 97 + v]) - want[t][v]);
        if (!(e <= worst)) worst = e;  // NaN-safe
      }
    INFO("sequence " << i << ": worst error " << worst << ", scale " << scale);
    CHECK(worst <= kTolerance * scale);
  }

  // The C API loads the same directory.
  eagerlm_model* c = nullptr;
  REQUIRE(eagerlm_model_load(saved.dir.str().c_str(), EAGERLM_DEVICE_CPU, &c) == EAGERLM_OK);
  CHECK(eagerlm_model_vocab_size(c) == 97);
  CHECK(eagerlm_model_context_length(c) == 80);
  eagerlm_model_free(c);
}

TEST_CASE("library scores of a ragged batch, fed in chunks, match the reference", "[library][reference][score]") {
  // log p(t) = z_t - log Σ exp(z) moves by at most 2·max|δz| when the logits move by δz (its
  // gradient e_t - softmax(z) has 1-norm <= 2): twice the logits' tolerance above, plus the fused
  // kernel's rounding of the log-sum-exp, below (vocab + 2·(max z - min z) + 16)·2^-24
  // (test/kernels/test_target_logprobs.cpp).
  SavedModel saved;
  const eagerlm::Model model = eagerlm::Model::load(saved.dir.str());
  eagerlm::reference::Gpt2Reference ref(saved.config, saved.params);
  // 548 tokens fed (every sequence's last token is only a target): several steps.
  const std::vector<size_t> lengths = {80, 3, 80, 80, 1, 80, 80, 70, 79, 2};
  std::vector<std::vector<int32_t>> batch;
  for (size_t i = 0; i < lengths.size(); ++i) batch.push_back(random_tokens(lengths[i], uint32_t(300 + i)));
  const auto got = model.score_batch(batch);
  REQUIRE(got.size() == batch.size());
  std::vector<float> flat;
  for (size_t i = 0; i < batch.size(); ++i) {
    REQUIRE(got[i].size() == lengths[i] - 1);
    flat.insert(flat.end(), got[i].begin(), got[i].end());
    const auto logits = ref.logits(batch[i]);
    for (size_t t = 0; t + 1 < lengths[i]; ++t) {
      const auto& z = logits[t];
      const double max = *std::max_element(z.begin(), z.end()), min = *std::min_element(z.begin(), z.end());
      double sum = 0, scale = 1;
      for (double v : z) sum += std::exp(v - max), scale = std::max(scale, std::abs(v));
      const double want = z[size_t(batch[i][t + 1])] - max - std::log(sum);
      const double bound = 2 * kTolerance * scale + (97 + 2 * (max - min) + 16) * 0x1p-24;
      INFO("sequence " << i << " token " << t + 1 << ": got " << got[i][t] << ", reference " << want);
      CHECK(std::abs(double(got[i][t]) - want) <= bound);
    }
  }

  // The C API gives the same values, concatenated.
  eagerlm_model* c = nullptr;
  REQUIRE(eagerlm_model_load(saved.dir.str().c_str(), EAGERLM_DEVICE_CPU, &c) == EAGERLM_OK);
  std::vector<int32_t> ids;
  for (const auto& b : batch) ids.insert(ids.end(), b.begin(), b.end());
  size_t count = 0;
  REQUIRE(eagerlm_score(c, ids.data(), lengths.data(), lengths.size(), nullptr, 0, &count) == EAGERLM_OK);
  REQUIRE(count == flat.size());
  std::vector<float> out(count);
  REQUIRE(eagerlm_score(c, ids.data(), lengths.data(), lengths.size(), out.data(), out.size(), &count) == EAGERLM_OK);
  CHECK(out == flat);
  eagerlm_model_free(c);
}

TEST_CASE("library greedy generation follows the reference's argmax", "[library][reference]") {
  SavedModel saved;
  const eagerlm::Model model = eagerlm::Model::load(saved.dir.str());
  eagerlm::reference::Gpt2Reference ref(saved.config, saved.params);
  eagerlm::Generator gen(model, 1, 80);
  eagerlm::GenerateOptions o;
  o.max_new_tokens = 24;
  o.ignore_eos = true;
  std::vector<int32_t> ids = random_tokens(9, 7);
  const auto got = gen.generate_tokens({ids}, o)[0].ids;
  REQUIRE(got.size() == 24);
  size_t compared = 0;
  for (size_t step = 0; step < got.size(); ++step) {
    const auto row = ref.logits(ids).back();
    std::vector<double> sorted = row;
    std::sort(sorted.rbegin(), sorted.rend());
    // A near-tie (within the float32 error) may go either way; the sequences may then differ.
    if (sorted[0] - sorted[1] <= kTolerance * std::max(1.0, std::abs(sorted[0]))) break;
    const int32_t want = int32_t(std::max_element(row.begin(), row.end()) - row.begin());
    INFO("step " << step);
    REQUIRE(got[step] == want);
    ids.push_back(want);
    ++compared;
  }
  CHECK(compared >= 20);  // fixed seeds: ties this early would mean the weights are too flat
}
