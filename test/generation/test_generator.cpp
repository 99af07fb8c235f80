// The generation loop over a scripted StepModel whose next token is a known function of each
// sequence's history: batching, chunked prefill, every finish reason, streaming callbacks.
#include <catch2/catch.hpp>

#include <map>
#include <stdexcept>

#include "engine/core/error.h"
#include "engine/generation/generator.h"

using namespace eagerlm;

namespace {

constexpr int64_t kVocab = 50257;
constexpr int32_t kEos = 50256;

// Next token of a history: a fixed hash into ids 300..1299 (ordinary word pieces), or EOS once
// the history reaches eos_at tokens.
int32_t next_token(const std::vector<int32_t>& h, size_t eos_at) {
  if (h.size() >= eos_at) return kEos;
  uint64_t x = h.size();
  for (int32_t t : h) x = x * 1000003u + uint64_t(t);
  return int32_t(300 + x % 1000);
}

class ScriptedModel : public StepModel {
 public:
  ScriptedModel(int64_t slots, int64_t max_len, int64_t rows, size_t eos_at = 1u << 30)
      : slots_(slots), len_(max_len), rows_(rows), eos_at_(eos_at) {}
  int64_t vocab_size() const override { return kVocab; }
  int64_t max_slots() const override { return slots_; }
  int64_t max_len() const override { return len_; }
  int64_t max_step_rows() const override { return rows_; }
  const float* step(const std::vector<SequenceStep>& seqs) override {
    logits_.assign(seqs.size() * size_t(kVocab), 0.0f);
    int64_t rows = 0;
    for (size_t i = 0; i < seqs.size(); ++i) {
      // Positions from past_len on are overwritten, as in a real cache; before it they must be there.
      auto& h = history_[seqs[i].slot];
      if (size_t(seqs[i].past_len) > h.size()) throw std::logic_error("past_len is past what the cache holds");
      h.resize(size_t(seqs[i].past_len));
      h.insert(h.end(), seqs[i].tokens, seqs[i].tokens + seqs[i].n_tokens);
      rows += seqs[i].n_tokens;
      logits_[i * size_t(kVocab) + size_t(next_token(h, eos_at_))] = 10.0f;
    }
    if (rows > rows_) throw std::logic_error("step carries more rows than allowed");
    ++steps;
    return logits_.data();
  }
  void copy_prefix(int32_t src, int32_t dst, int32_t n) override {
    const auto& from = history_[src];
    if (size_t(n) > from.size()) throw std::logic_error("copy_prefix past what the slot holds");
    history_[dst].assign(from.begin(), from.begin() + n);
  }
  int steps = 0;

 private:
  int64_t slots_, len_, rows_;
  size_t eos_at_;
  std::map<int32_t, std::vector<int32_t>> history_;
  std::vector<float> logits_;
};

std::vector<int32_t> expected_ids(std::vector<int32_t> h, size_t n, size_t eos_at = 1u << 30) {
  std::vector<int32_t> out;
  while (out.size() < n) {
    const int32_t t = next_token(h, eos_at);
    out.push_back(t);
    h.push_back(t);
    if (t == kEos) break;
  }
  return out;
}

}  // namespace

TEST_CASE("a ragged batch, prefilled in chunks, gives each prompt its own continuation", "[generator]") {
  const Tokenizer tok = Tokenizer::gpt2();
  const std::vector<std::vector<int32_t>> prompts = {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {42}, {7, 7, 7}};
  ScriptedModel model(3, 64, 5);
  GenerationLoop gen(model, tok);
  GenerationOptions o;
  o.max_new_tokens = 12;
  const auto results = gen.generate(prompts, o);
  REQUIRE(results.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(results[i].ids == expected_ids(prompts[i], 12));
    CHECK(results[i].finish_reason == FinishReason::kLength);
    CHECK(results[i].text == tok.decode(results[i].ids));
  }
  CHECK(gen.timings().generated_tokens == 36);
  CHECK(gen.timings().prompt_tokens == 15);
}

TEST_CASE("end-of-text ends a sequence unless ignored; finished sequences leave the batch", "[generator]") {
  const Tokenizer tok = Tokenizer::gpt2();
  ScriptedModel model(2, 64, 64, 6);
  GenerationLoop gen(model, tok);
  GenerationOptions o;
  o.max_new_tokens = 20;
  const auto r = gen.generate({{1, 2, 3}, {4}}, o);
  CHECK(r[0].finish_reason == FinishReason::kEos);
  CHECK(r[0].ids == expected_ids({1, 2, 3}, 20, 6));
  CHECK(r[0].ids.back() == kEos);
  CHECK(r[0].text == tok.decode(std::vector<int32_t>(r[0].ids.begin(), r[0].ids.end() - 1)));
  CHECK(r[1].ids.size() == 6);  // 1 prompt token + 5 before the history reaches 6
  o.ignore_eos = true;
  ScriptedModel model2(1, 64, 64, 6);
  GenerationLoop gen2(model2, tok);
  const auto r2 = gen2.generate({{1, 2, 3}}, o);
  CHECK(r2[0].ids.size() == 20);
  CHECK(r2[0].finish_reason == FinishReason::kLength);
}

TEST_CASE("a stop string cuts the text and ends the sequence", "[generator]") {
  const Tokenizer tok = Tokenizer::gpt2();
  GenerationOptions o;
  o.max_new_tokens = 16;
  ScriptedModel free_model(1, 64, 64);
  const auto free_run = GenerationLoop(free_model, tok).generate({{5, 6}}, o)[0];
  const std::string stop = tok.decode(std::vector<int32_t>{free_run.ids[5]});
  o.stop = {stop};
  ScriptedModel model(1, 64, 64);
  const auto r = GenerationLoop(model, tok).generate({{5, 6}}, o)[0];
  CHECK(r.finish_reason == FinishReason::kStop);
  CHECK(r.text == free_run.text.substr(0, free_run.text.find(stop)));
  CHECK(r.ids.size() <= 6);
}

TEST_CASE("the callback streams the text and can stop a sequence", "[generator]") {
  const Tokenizer tok = Tokenizer::gpt2();
  ScriptedModel model(1, 64, 64);
  GenerationOptions o;
  o.max_new_tokens = 10;
  std::string streamed;
  int calls = 0;
  const auto r = GenerationLoop(model, tok).generate({{9}}, o, [&](size_t, const StreamEvent& e) {
    streamed += e.text;
    return ++calls < 4;
  })[0];
  CHECK(r.finish_reason == FinishReason::kCallback);
  CHECK(r.ids.size() == 4);
  CHECK(streamed == r.text);
}

TEST_CASE("the context length ends a sequence with 'length'", "[generator]") {
  const Tokenizer tok = Tokenizer::gpt2();
  ScriptedModel model(1, 10, 64);
  GenerationOptions o;
  o.max_new_tokens = 100;
  const auto r = GenerationLoop(model, tok).generate({{1, 2, 3, 4, 5, 6, 7, 8}}, o)[0];
  CHECK(r.finish_reason == FinishReason::kLength);
  CHECK(r.ids.size() == 2);
}

TEST_CASE("bad generation requests are rejected before running", "[generator][errors]") {
  const Tokenizer tok = Tokenizer::gpt2();
  ScriptedModel model(2, 10, 64);
  GenerationLoop gen(model, tok);
  GenerationOptions o;
  CHECK_THROWS_AS(gen.generate({{}}, o), Error);                           // empty prompt
  CHECK_THROWS_AS(gen.generate({std::vector<int32_t>(11, 1)}, o), Error);  // longer than max_len
  o.max_new_tokens = -1;
  CHECK_THROWS_AS(gen.generate({{1}}, o), Error);
  CHECK(model.steps == 0);
}

TEST_CASE("more prompts than cache slots wait for a slot and get their own continuations", "[generator][batch]") {
  const Tokenizer tok = Tokenizer::gpt2();
  ScriptedModel model(2, 16, 64);
  GenerationOptions o;
  o.max_new_tokens = 4;
  const std::vector<std::vector<int32_t>> prompts = {{1}, {2, 3}, {4, 5, 6}, {1}};
  const auto results = GenerationLoop(model, tok).generate(prompts, o);
  REQUIRE(results.size() == 4);
  for (size_t i = 0; i < prompts.size(); ++i) CHECK(results[i].ids == expected_ids(prompts[i], 4));
}

TEST_CASE("more live sequences than a step may carry decode in several steps", "[generator][batch]") {
  // 40 sequences, steps of at most 16 rows: each decode round takes three steps, and every
  // sequence still gets exactly its own continuation.
  const Tokenizer tok = Tokenizer::gpt2();
  ScriptedModel model(40, 64, 16);
  std::vector<std::vector<int32_t>> prompts;
  for (int32_t i = 0; i < 40; ++i) prompts.push_back({500 + i, 7, i});
  GenerationOptions o;
  o.max_new_tokens = 5;
  const auto results = GenerationLoop(model, tok).generate(prompts, o);
  REQUIRE(results.size() == 40);
  for (size_t i = 0; i < prompts.size(); ++i) CHECK(results[i].ids == expected_ids(prompts[i], 5));
}

namespace {

// Puts its largest logits on padding ids (those at or past `real`), as an untrained nanoGPT-style
// padded embedding could: they must never be generated.
class PaddedModel : public StepModel {
 public:
  explicit PaddedModel(int64_t vocab) : vocab_(vocab) {}
  int64_t vocab_size() const override { return vocab_; }
  int64_t max_slots() const override { return 2; }
  int64_t max_len() const override { return 64; }
  int64_t max_step_rows() const override { return 64; }
  const float* step(const std::vector<SequenceStep>& seqs) override {
    logits_.assign(seqs.size() * size_t(vocab_), 0.0f);
    for (size_t i = 0; i < seqs.size(); ++i) {
      for (int64_t id = kVocab; id < vocab_; ++id) logits_[i * size_t(vocab_) + size_t(id)] = 50.0f;
      logits_[i * size_t(vocab_) + 1234] = 5.0f;
    }
    return logits_.data();
  }
  void copy_prefix(int32_t, int32_t, int32_t) override {}

 private:
  int64_t vocab_;
  std::vector<float> logits_;
};

}  // namespace

TEST_CASE("a padded vocabulary's padding ids are never sampled", "[generator][vocab]") {
  const Tokenizer tok = Tokenizer::gpt2();
  PaddedModel model(50304);
  GenerationOptions o;
  o.max_new_tokens = 8;
  o.ignore_eos = true;
  o.logprobs = true;
  o.sampling.vocab_limit = kVocab;
  const auto greedy = GenerationLoop(model, tok).generate({{1, 2}}, o)[0];
  CHECK(greedy.ids == std::vector<int32_t>(8, 1234));
  o.sampling.temperature = 5.0f;  // flat: any id of the real vocabulary may come up, no padding one
  o.sampling.seed = 3;
  const auto sampled = GenerationLoop(model, tok).generate({{1, 2}}, o)[0];
  for (int32_t id : sampled.ids) CHECK(id < kVocab);
}
