// Shared by the library tests: temporary directories, a tiny model initialized once through the
// public API (2 layers x 64 wide, GPT-2's vocabulary), and an argmax-over-logits reference.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <eagerlm/eagerlm.hpp>

#include "test/support/temp_dir.h"

namespace eagerlm::test {

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline const char* tiny_config_json() {
  return R"({"model_type": "gpt2", "n_layer": 2, "n_embd": 64, "n_head": 4, "n_positions": 96, "vocab_size": 50257})";
}

// One model for the whole test binary (initializing is the slow part); also what shows that one
// Model serves many generators.
inline const Model& tiny_model() {
  static const Model model = [] {
    TempDir dir;
    write_file((dir / "config.json"), tiny_config_json());
    return Model::initialize((dir / "config.json"), 7);
  }();
  return model;
}

inline bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    i += n;
  }
  return true;  // (overlong forms and surrogates pass: enough for comparing decoder output)
}

inline int32_t argmax(const float* v, size_t n) {
  return int32_t(std::max_element(v, v + n) - v);  // first of ties, like the greedy sampler
}

// Greedy continuation computed from Model::logits alone (a fresh full forward pass per token, no
// KV cache, no sampler): what Generator's greedy decoding must reproduce.
inline std::vector<int32_t> greedy_by_logits(const Model& model, std::vector<int32_t> ids, size_t n) {
  const size_t vocab = model.info().vocab_size;
  std::vector<int32_t> out;
  for (size_t i = 0; i < n; ++i) {
    const std::vector<float> logits = model.logits(ids);
    const int32_t next = argmax(logits.data() + (ids.size() - 1) * vocab, vocab);
    out.push_back(next);
    ids.push_back(next);
  }
  return out;
}

}  // namespace eagerlm::test
