// GPT-2 hyper-parameters: from a Hugging Face config.json, or one of the published presets.
// Every value is validated before anything is sized from it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/dtype.h"

namespace eagerlm::gpt2 {

struct Config {
  int64_t n_layer = 12;
  int64_t n_embd = 768;
  int64_t n_head = 12;
  int64_t n_positions = 1024;
  int64_t vocab_size = 50257;
  int64_t n_inner = 0;  // MLP width; 0 means 4·n_embd (Hugging Face's `n_inner: null`)
  double layer_norm_epsilon = 1e-5;
  double initializer_range = 0.02;
  std::string activation_function = "gelu_new";
  int64_t eos_token_id = 50256;

  int64_t d_head() const { return n_embd / n_head; }
  int64_t mlp_width() const { return n_inner > 0 ? n_inner : 4 * n_embd; }

  // Throws Error(kInvalidFile) naming `source` and the field when a value is unusable.
  void validate(const std::string& source) const;

  // Hugging Face config.json text for this config (GPT2LMHeadModel); torch_dtype names the
  // weights' storage dtype.
  std::string to_json(DType weights_dtype = DType::kF32) const;
};

// Parses config.json text; `source` names the file in error messages. Accepts the GPT-2 names
// and Hugging Face's aliases (hidden_size, num_hidden_layers, num_attention_heads,
// max_position_embeddings; n_ctx as a fallback for n_positions).
Config config_from_json(const std::string& text, const std::string& source);
Config config_from_file(const std::string& path);

// "gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"; throws Error(kInvalidArgument) otherwise.
Config preset(std::string_view name);
const std::vector<std::string>& preset_names();

}  // namespace eagerlm::gpt2
