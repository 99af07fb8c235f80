// The library under threads, harder than test_threads.cpp: models loaded, initialized and freed
// concurrently while others generate; generators created and destroyed from many threads over one
// shared model; C handles freed in another thread than the one that made them. Every result must
// equal the same call made alone. Run in CI under ThreadSanitizer (a build without OpenMP, so that
// the uninstrumented libgomp cannot hide or invent races), and as an ordinary test everywhere.
#include <catch2/catch.hpp>

#include <eagerlm/eagerlm.h>
#include <eagerlm/eagerlm.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "test/library/library_test_support.h"

using namespace eagerlm;

namespace {

constexpr int kThreads = 6;
constexpr int kRounds = 3;

GenerateOptions options_for(int worker) {
  GenerateOptions o;
  o.max_new_tokens = 6;
  o.ignore_eos = true;
  if (worker % 2) {
    o.temperature = 0.9f;
    o.top_k = 30;
    o.seed = uint64_t(worker);
  }
  return o;
}

std::string prompt_for(int worker) { return "Thread number " + std::to_string(worker) + " says"; }

}  // namespace

TEST_CASE("concurrent loads, generators and frees give every call its lone result", "[library][threads][stress]") {
  test::TempDir dir;
  test::write_file(dir / "config.json", test::tiny_config_json());
  const std::string config = dir / "config.json";

  // What each worker must get, computed alone first.
  std::vector<std::vector<int32_t>> expected(kThreads);
  {
    const Model m = Model::initialize(config, 7);
    for (int w = 0; w < kThreads; ++w) {
      Generator g(m, 1, 64);
      expected[size_t(w)] = g.generate(prompt_for(w), options_for(w)).ids;
    }
  }

  const Model shared = Model::initialize(config, 7);
  std::atomic<int> mismatches{0}, errors{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kThreads; ++w)
    threads.emplace_back([&, w] {
      try {
        for (int round = 0; round < kRounds; ++round) {
          // Half the workers make a model of their own each round; the others share one.
          const Model own = w % 2 ? Model::initialize(config, 7) : shared;
          Generator g(own, 1, 64);
          if (g.generate(prompt_for(w), options_for(w)).ids != expected[size_t(w)]) ++mismatches;
          if (own.logits({1, 2, 3}).size() != 3 * own.info().vocab_size) ++mismatches;
        }
      } catch (...) {
        ++errors;
      }
    });
  for (auto& t : threads) t.join();
  CHECK(errors == 0);
  CHECK(mismatches == 0);
}

TEST_CASE("C handles made in one thread are used and freed in others", "[library][threads][stress][c]") {
  test::TempDir dir;
  test::write_file(dir / "config.json", test::tiny_config_json());
  eagerlm_model* model = nullptr;
  REQUIRE(eagerlm_model_initialize((dir / "config.json").c_str(), 7, EAGERLM_DEVICE_CPU, &model) == EAGERLM_OK);
  std::vector<eagerlm_generator*> generators(kThreads, nullptr);
  for (auto& g : generators) REQUIRE(eagerlm_generator_create(model, 1, 32, &g) == EAGERLM_OK);
  eagerlm_model_free(model);  // the generators keep the weights alive

  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kThreads; ++w)
    threads.emplace_back([&, w] {
      const std::string prompt = prompt_for(w);
      const char* p = prompt.c_str();
      eagerlm_result* result = nullptr;
      if (eagerlm_generate(generators[size_t(w)], &p, nullptr, 1, nullptr, nullptr, nullptr, &result) != EAGERLM_OK)
        ++failures;
      eagerlm_result_free(result);
      eagerlm_generator_free(generators[size_t(w)]);
    });
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
}
