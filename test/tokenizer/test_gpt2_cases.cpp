// The GPT-2 reference cases (../shared/data/gpt2-tokenizer/cases.jsonl, ids from an independent
// implementation of GPT-2's encoder): exact ids and exact round trip for every case.
#include <catch2/catch.hpp>

#include <chrono>

#include "engine/tokenizer/tokenizer.h"
#include "test/tokenizer/tokenizer_test_support.h"

using eagerlm::Tokenizer;
using eagerlm::test::gpt2_cases;

TEST_CASE("embedded GPT-2 vocabulary has GPT-2's shape", "[tokenizer][gpt2]") {
  const Tokenizer tok = Tokenizer::gpt2();
  CHECK(tok.vocab_size() == 50257);
  CHECK(tok.eos_id() == 50256);
  CHECK(tok.token_bytes(50256) == "<|endoftext|>");
  CHECK(tok.token_bytes(220) == " ");   // "Ġ" in encoder.json
  CHECK(tok.token_bytes(198) == "\n");  // "Ċ"
  CHECK(tok.token_bytes(15496) == "Hello");
  REQUIRE(tok.special_tokens().size() == 1);
  CHECK(tok.special_tokens()[0].first == "<|endoftext|>");
}

TEST_CASE("every case in cases.jsonl encodes to its exact ids and decodes back", "[tokenizer][gpt2]") {
  const Tokenizer tok = Tokenizer::gpt2();
  const auto& cases = gpt2_cases();
  REQUIRE(cases.size() >= 100);
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i << ": " << cases[i].text);
    CHECK(tok.encode(cases[i].text) == cases[i].ids);
    CHECK(tok.decode(cases[i].ids) == cases[i].text);
  }
}

TEST_CASE("encoding the cases twice gives the same ids (the word cache is transparent)", "[tokenizer][gpt2]") {
  const Tokenizer tok = Tokenizer::gpt2();
  std::string all;
  for (const auto& c : gpt2_cases()) all += c.text;
  const auto first = tok.encode(all);
  const auto second = tok.encode(all);
  CHECK(first == second);
  CHECK(tok.decode(first) == all);
}

TEST_CASE("gpt2() loads fast and later calls share the tables", "[tokenizer][gpt2]") {
  const auto start = std::chrono::steady_clock::now();
  const Tokenizer a = Tokenizer::gpt2();
  const Tokenizer b = Tokenizer::gpt2();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  CHECK(&a.token_bytes(0) == &b.token_bytes(0));
  // Generous: the first load takes ~40 ms in Release here; the bound catches an accidental
  // slow path (e.g. a DOM parse per call), not noise.
  CHECK(ms < 1000.0);
}

TEST_CASE("decode rejects unknown ids, naming the id", "[tokenizer][gpt2]") {
  const Tokenizer tok = Tokenizer::gpt2();
  const std::vector<int32_t> bad = {15496, 50257};
  try {
    tok.decode(bad);
    FAIL("decode accepted id 50257");
  } catch (const eagerlm::Error& e) {
    CHECK(e.code() == eagerlm::ErrorCode::kInvalidArgument);
    CHECK_THAT(e.what(), Catch::Contains("50257") && Catch::Contains("position 1"));
  }
  CHECK_THROWS_AS(tok.decode(std::vector<int32_t>{-1}), eagerlm::Error);
  CHECK_THROWS_AS(tok.token_bytes(1 << 30), eagerlm::Error);
}
