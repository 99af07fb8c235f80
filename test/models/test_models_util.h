// Small random GPT-2 models for tests: weights drawn with std::mt19937 (independent of
// eagerlm's initializer), large enough in magnitude that attention and the MLP matter.
#pragma once

#include <random>

#include "models/gpt2/parameters.h"

namespace eagerlm::test {

inline gpt2::Config tiny_config(int64_t n_layer = 2, int64_t n_embd = 48, int64_t n_head = 3, int64_t n_positions = 80,
                                int64_t vocab = 97) {
  gpt2::Config c;
  c.n_layer = n_layer;
  c.n_embd = n_embd;
  c.n_head = n_head;
  c.n_positions = n_positions;
  c.vocab_size = vocab;
  c.eos_token_id = vocab - 1;
  return c;
}

inline gpt2::ParameterTensors random_parameters(const gpt2::Config& c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  gpt2::ParameterTensors p;
  p.specs = gpt2::parameter_specs(c);
  for (const auto& s : p.specs) {
    Tensor t = Tensor::empty(s.shape);
    float* v = t.f32();
    for (int64_t i = 0; i < t.numel(); ++i) {
      const float z = normal(rng);
      switch (s.init) {
        case gpt2::InitKind::kOnes: v[i] = 1.0f + 0.1f * z; break;
        case gpt2::InitKind::kZeros: v[i] = 0.05f * z; break;
        default: v[i] = 0.15f * z; break;
      }
    }
    p.tensors.push_back(std::move(t));
  }
  return p;
}

}  // namespace eagerlm::test
