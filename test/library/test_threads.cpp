// The threading promise: one Model shared by several Generators in several threads gives each
// thread exactly what it gets running alone; Model calls (logits, tokenize) are safe from many
// threads at once; a Generator refuses a second concurrent call instead of corrupting its cache.
#include <catch2/catch.hpp>

#include <eagerlm/eagerlm.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "test/library/library_test_support.h"

using namespace eagerlm;

namespace {

// One thread's work: several calls with different prompts and options on its own Generator.
struct Job {
  std::vector<std::string> prompts;
  GenerateOptions options;
};

std::vector<Job> jobs() {
  std::vector<Job> out(3);
  out[0].prompts = {"The capital of France", "Once"};
  out[0].options.max_new_tokens = 12;
  out[1].prompts = {"In a hole in the ground there lived", "A"};
  out[1].options.temperature = 0.8f;
  out[1].options.top_p = 0.9f;
  out[1].options.seed = 11;
  out[1].options.max_new_tokens = 10;
  out[2].prompts = {"It was the best of times", "It was the worst of times"};
  out[2].options.temperature = 1.2f;
  out[2].options.top_k = 20;
  out[2].options.repetition_penalty = 1.3f;
  out[2].options.seed = 3;
  out[2].options.max_new_tokens = 14;
  for (auto& j : out) j.options.ignore_eos = true;
  return out;
}

// Runs a job twice (both prompts as one batch, then the first prompt alone) on `gen`.
std::vector<std::vector<int32_t>> run(Generator& gen, const Job& job) {
  std::vector<std::vector<int32_t>> ids;
  for (const auto& r : gen.generate_batch(job.prompts, job.options)) ids.push_back(r.ids);
  ids.push_back(gen.generate(job.prompts[0], job.options).ids);
  return ids;
}

}  // namespace

TEST_CASE("one model, three generators in three threads: the same results as one at a time", "[library][threads]") {
  const Model& model = test::tiny_model();
  const auto work = jobs();

  std::vector<std::vector<std::vector<int32_t>>> sequential;
  for (const auto& job : work) {
    Generator gen(model, 2, 64);
    sequential.push_back(run(gen, job));
  }

  // Each thread makes its own Generator from a copy of the Model handle, and goes three times
  // round, so that the threads overlap whatever the scheduling.
  std::vector<std::vector<std::vector<std::vector<int32_t>>>> parallel(work.size());
  std::vector<std::string> errors(work.size());
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < work.size(); ++t)
    threads.emplace_back([&, t, handle = model] {
      try {
        Generator gen(handle, 2, 64);
        ++ready;
        while (ready.load() < int(work.size())) std::this_thread::yield();
        for (int round = 0; round < 3; ++round) parallel[t].push_back(run(gen, work[t]));
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& th : threads) th.join();

  for (size_t t = 0; t < work.size(); ++t) {
    INFO("thread " << t);
    CHECK(errors[t].empty());
    REQUIRE(parallel[t].size() == 3);
    for (const auto& round : parallel[t]) CHECK(round == sequential[t]);
  }
}

TEST_CASE("model calls from several threads at once match the single-threaded answers", "[library][threads]") {
  const Model& model = test::tiny_model();
  const std::vector<std::vector<int32_t>> batch = {{464, 3290, 318, 257}, {15496, 995}};
  const auto want_logits = model.logits_batch(batch);
  const auto want_ids = model.tokenize("Thread safety, tested: ünïcödé and all.");
  std::vector<int> ok(4, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < ok.size(); ++t)
    threads.emplace_back([&, t] {
      bool same = true;
      for (int i = 0; i < 3; ++i) {
        same = same && model.logits_batch(batch) == want_logits;
        same = same && model.tokenize("Thread safety, tested: ünïcödé and all.") == want_ids;
        same = same && model.detokenize(want_ids) == "Thread safety, tested: ünïcödé and all.";
      }
      ok[t] = same ? 1 : 0;
    });
  for (auto& th : threads) th.join();
  CHECK(ok == std::vector<int>(ok.size(), 1));
}

TEST_CASE("a generator used from two threads at once refuses the second call", "[library][threads]") {
  Generator gen(test::tiny_model(), 1, 64);
  GenerateOptions o;
  o.max_new_tokens = 20;
  o.ignore_eos = true;
  std::atomic<bool> inside{false}, release{false};
  std::string refused;
  std::thread first([&] {
    gen.generate("a", o, [&](const TokenEvent&) {
      inside = true;
      while (!release.load()) std::this_thread::yield();
      return false;
    });
  });
  while (!inside.load()) std::this_thread::yield();
  try {
    gen.generate("b", o);
  } catch (const Error& e) {
    refused = e.what();
  }
  release = true;
  first.join();
  CHECK_THAT(refused, Catch::Contains("already running"));
  CHECK(gen.generate("b", o).ids.size() == 20);  // and it works again afterwards
}
