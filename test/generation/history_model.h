// A StepModel for scheduler tests whose next-token logits are a fixed function of everything fed
// to the cache slot so far: eight candidate ids with distinct logits, both derived from a hash of
// the slot's history. So a scheduler that feeds a slot the wrong tokens, at the wrong positions,
// or reuses a prefix the slot does not hold, gets different ids; sampling still has choices to
// make. It also checks every step's shape the way a real model does.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <vector>

#include "engine/generation/step_model.h"

namespace eagerlm::test {

class HistoryModel : public StepModel {
 public:
  static constexpr int64_t kVocab = 1000;
  HistoryModel(int64_t slots, int64_t max_len, int64_t rows) : slots_(slots), len_(max_len), rows_(rows) {}
  int64_t vocab_size() const override { return kVocab; }
  int64_t max_slots() const override { return slots_; }
  int64_t max_len() const override { return len_; }
  int64_t max_step_rows() const override { return rows_; }
  int64_t prefill_chunk() const override { return chunk; }
  int64_t chunk = 256;  // the chunk the model asks for when the scheduler's options leave it 0

  const float* step(const std::vector<SequenceStep>& seqs) override {
    if (seqs.empty() || int64_t(seqs.size()) > slots_) throw std::logic_error("bad sequence count");
    logits_.assign(seqs.size() * size_t(kVocab), -5.0f);
    int64_t rows = 0;
    std::vector<bool> used(size_t(slots_), false);
    for (size_t i = 0; i < seqs.size(); ++i) {
      const SequenceStep& s = seqs[i];
      if (s.slot < 0 || s.slot >= slots_ || used[size_t(s.slot)]) throw std::logic_error("bad or repeated slot");
      used[size_t(s.slot)] = true;
      auto& h = history_[s.slot];
      if (s.past_len < 0 || size_t(s.past_len) > h.size()) throw std::logic_error("past_len past the slot's cache");
      if (s.n_tokens < 1 || s.past_len + s.n_tokens > len_) throw std::logic_error("step past max_len");
      h.resize(size_t(s.past_len));  // later positions are overwritten, as in a real cache
      h.insert(h.end(), s.tokens, s.tokens + s.n_tokens);
      rows += s.n_tokens;
      fill(h, &logits_[i * size_t(kVocab)]);
    }
    if (rows > rows_) throw std::logic_error("step carries more rows than allowed");
    ++steps;
    fed_rows += rows;
    return logits_.data();
  }
  void copy_prefix(int32_t src, int32_t dst, int32_t n) override {
    const auto from = history_[src];
    if (src == dst || n < 0 || size_t(n) > from.size()) throw std::logic_error("copy_prefix past what the slot holds");
    history_[dst].assign(from.begin(), from.begin() + n);
    ++copies;
  }

  // The logits after history h.
  static void fill(const std::vector<int32_t>& h, float* row) {
    uint64_t x = 1469598103934665603ull;
    for (int32_t t : h) x = (x ^ uint64_t(t)) * 1099511628211ull;
    for (int c = 0; c < 8; ++c) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      row[(x >> 33) % uint64_t(kVocab)] = float((x >> 20) % 1000) / 250.0f;
    }
  }

  int steps = 0;
  int copies = 0;
  int64_t fed_rows = 0;

 private:
  int64_t slots_, len_, rows_;
  std::map<int32_t, std::vector<int32_t>> history_;
  std::vector<float> logits_;
};

}  // namespace eagerlm::test
