// Pathological inputs finish in bounded time and memory with the right ids (compared with the
// plain BPE reference at sizes it can handle, and by structure at full size), and encode is safe
// from several threads on one const Tokenizer.
#include <catch2/catch.hpp>

#include <chrono>
#include <random>
#include <thread>

#include "engine/tokenizer/tokenizer.h"
#include "test/tokenizer/tokenizer_test_support.h"

namespace {

using eagerlm::Tokenizer;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Time limits are ~20x what a Release build needs here; they catch quadratic blow-ups (which
// would take hours at these sizes), not machine noise.
constexpr double kSecondsLimit = 10.0;

}  // namespace

TEST_CASE("robustness: a million spaces", "[tokenizer][robustness]") {
  const Tokenizer tok = Tokenizer::gpt2();
  const std::string spaces(1000000, ' ');
  auto start = Clock::now();
  const auto ids = tok.encode(spaces);
  CHECK(seconds_since(start) < kSecondsLimit);
  CHECK(tok.decode(ids) == spaces);
  // One piece; BPE of n spaces is periodic: the same run of tokens repeated, then a remainder.
  // Check the prefix against smaller runs, which share it.
  const auto small = tok.encode(std::string(4096, ' '));
  REQUIRE(ids.size() > small.size());
  size_t common = 0;
  while (common < small.size() && ids[common] == small[common]) ++common;
  CHECK(common + 8 >= small.size());

  start = Clock::now();
  const std::string followed = spaces + "x";  // the last space joins "x": " x"
  const auto ids2 = tok.encode(followed);
  CHECK(seconds_since(start) < kSecondsLimit);
  CHECK(tok.decode(ids2) == followed);
  CHECK(ids2.back() == tok.encode(" x")[0]);
}

TEST_CASE("robustness: repeated contractions and long runs", "[tokenizer][robustness]") {
  const Tokenizer tok = Tokenizer::gpt2();
  std::string s;
  for (int i = 0; i < 10000; ++i) s += "'s";
  auto start = Clock::now();
  const auto ids = tok.encode(s);
  CHECK(seconds_since(start) < kSecondsLimit);
  CHECK(ids == std::vector<int32_t>(10000, 338));  // "'s" is token 338

  for (const std::string unit : {"a", "1", "!", "\u4f60", "\n", "ab", "\xC3\xA9"}) {
    std::string long_run;
    while (long_run.size() < 1000000) long_run += unit;
    start = Clock::now();
    const auto run_ids = tok.encode(long_run);
    INFO("unit " << unit);
    CHECK(seconds_since(start) < kSecondsLimit);
    CHECK(tok.decode(run_ids) == long_run);
  }
}

TEST_CASE("robustness: random bytes never crash; replace mode always succeeds", "[tokenizer][robustness]") {
  const Tokenizer tok = Tokenizer::gpt2();
  eagerlm::EncodeOptions replace;
  replace.invalid_utf8 = eagerlm::InvalidUtf8::kReplace;
  replace.parse_special = true;
  std::mt19937 rng(Catch::rngSeed());
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes(rng() % 5000, '\0');
    for (char& b : bytes) b = char(rng() % 256);
    const auto ids = tok.encode(bytes, replace);
    REQUIRE(tok.decode(ids) == eagerlm::test::reference_replace(bytes));
  }
}

TEST_CASE("robustness: encode from several threads on one const Tokenizer", "[tokenizer][threads]") {
  const Tokenizer tok = Tokenizer::gpt2();
  std::vector<std::string> texts;
  std::vector<std::vector<int32_t>> expected;
  for (const auto& c : eagerlm::test::gpt2_cases()) {
    texts.push_back(c.text);
    expected.push_back(c.ids);
  }
  constexpr int kThreads = 4;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      for (int round = 0; round < 20; ++round)
        for (size_t k = 0; k < texts.size(); ++k) {
          const size_t i = (k + rng()) % texts.size();  // different orders per thread
          if (tok.encode(texts[i]) != expected[i]) ++mismatches[t];
        }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) CHECK(mismatches[t] == 0);
}
