// eagerlm::Model: a GPT-2-style model with its tokenizer, loaded from a Hugging Face directory or
// initialized from a config. A Model is a cheap handle to immutable weights: copy it freely, and
// share one between any number of Generators and threads (see docs/library.md, "Threads").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common.hpp"
#include "error.hpp"
#include "export.h"

namespace eagerlm {

struct ModelInfo {
  size_t n_layer = 0;
  size_t n_embd = 0;
  size_t n_head = 0;
  size_t context_length = 0;  // n_positions: the longest sequence the model takes
  size_t vocab_size = 0;
  int32_t eos_token_id = -1;
  size_t parameter_count = 0;
  Device device = Device::kCpu;
  std::string source;  // the directory, or e.g. "gpt2 initialized from seed 0"
};

class EAGERLM_API Model {
 public:
  // A Hugging Face GPT-2 directory: config.json plus model.safetensors (or shards with
  // model.safetensors.index.json), in float32, float16 or bfloat16; its tokenizer files if it has
  // any, else GPT-2's built-in vocabulary. Throws kIo, kInvalidFile, kUnsupported, kOutOfMemory.
  static Model load(const std::string& directory, Device device = Device::kCpu);

  // Fresh random weights (Hugging Face's initialization, drawn with JAX's random numbers: the same
  // seed gives the same weights as `eagerlm init`) for a preset name ("gpt2", "gpt2-medium",
  // "gpt2-large", "gpt2-xl") or a config.json path (or a directory holding one). GPT-2's tokenizer.
  static Model initialize(const std::string& preset_or_config, uint64_t seed = 0,
                          Device device = Device::kCpu);

  Model(const Model&) = default;  // copies share the weights; there is no empty Model
  Model& operator=(const Model&) = default;

  ModelInfo info() const;

  // Token ids of UTF-8 text. "<|endoftext|>" in the text is ordinary text unless parse_special.
  // Throws kInvalidArgument for invalid UTF-8.
  std::vector<int32_t> tokenize(std::string_view text, bool parse_special = false) const;
  // The bytes the ids stand for, concatenated: not necessarily valid UTF-8 when a character is
  // split across tokens. Throws kInvalidArgument for an id outside the vocabulary.
  std::string detokenize(const std::vector<int32_t>& ids) const;

  // Next-token logits (before any softmax) at every position of a sequence: ids.size() rows of
  // vocab_size floats, row-major; row t scores the token after ids[0..t]. Sequences are at most
  // context_length tokens long. Runs a fresh forward pass (its own cache), so it is safe to call
  // from several threads at once.
  std::vector<float> logits(const std::vector<int32_t>& ids) const;
  // The same for several sequences of any lengths, run together as one batch.
  std::vector<std::vector<float>> logits_batch(const std::vector<std::vector<int32_t>>& batch) const;

  struct Impl;

 private:
  explicit Model(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
  friend class Generator;
};

}  // namespace eagerlm
