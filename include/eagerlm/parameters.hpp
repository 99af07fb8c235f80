// GPT-2 configs and parameters as plain data, for callers that hold weights themselves (the
// Python package's init_params, param_shapes and Model.from_params, a training framework): the
// parameters a config implies, fresh parameters drawn exactly as `eagerlm init` draws them, and
// the views through which Model::from_parameters takes weights in the caller's memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "export.h"

namespace eagerlm {

// A GPT-2 model's sizes, named as in Hugging Face's config.json. Values are checked where a
// config is used (Error kInvalidArgument naming the field and its range).
struct EAGERLM_API ModelConfig {
  int64_t n_layer = 12;
  int64_t n_embd = 768;
  int64_t n_head = 12;
  int64_t n_positions = 1024;  // the context length
  int64_t vocab_size = 50257;
  int64_t n_inner = 0;  // MLP width; 0: 4 x n_embd
  double layer_norm_epsilon = 1e-5;
  double initializer_range = 0.02;
  std::string activation_function = "gelu_new";
  int64_t eos_token_id = 50256;

  // A preset name ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"), a config.json path, or a
  // directory holding one: what Model::initialize and `eagerlm init` take. Throws kInvalidArgument
  // (unknown name), kIo (no such file), kInvalidFile (a malformed config.json, naming the field).
  static ModelConfig load(const std::string& preset_or_config);
  // config.json text (GPT-2's names or Hugging Face's aliases such as hidden_size; other keys
  // are ignored). Throws kInvalidArgument naming `source` and the field.
  static ModelConfig from_json(const std::string& text, const std::string& source = "config");
  // Hugging Face config.json text for GPT2LMHeadModel.
  std::string to_json() const;
};

// One parameter a config implies: its Hugging Face name without the "transformer." prefix (e.g.
// "h.3.attn.c_attn.weight"), its shape (Conv1D weights are [in, out]), element type and size.
struct ParameterInfo {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype;  // "F32", "F16" or "BF16", as safetensors spells them
  size_t bytes = 0;
};

// The parameters of `config` in canonical order (wte, wpe, h.0 ... h.{n_layer-1}, ln_f), stored
// as `dtype` ("F32", "F16" or "BF16"), without allocating them: what `eagerlm init --dry-run`
// lists. Throws kInvalidArgument for a bad config or dtype.
EAGERLM_API std::vector<ParameterInfo> parameter_shapes(const ModelConfig& config, const std::string& dtype = "F32");

// A tensor in host memory: C-contiguous (row-major), `bytes` long, `dtype` as safetensors
// spells it ("F32", "F16", "BF16"; other names are accepted here and refused, by name, where a
// parameter is expected).
struct TensorView {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;  // [] for a scalar
  const void* data = nullptr;
  size_t bytes = 0;
};

// Parameters in memory the library allocated (each tensor 64-byte aligned): views in canonical
// order, valid while `memory` or a copy of it lives.
struct Parameters {
  std::vector<TensorView> tensors;
  std::shared_ptr<void> memory;
};

// Fresh parameters on the host, bit for bit those `eagerlm init --seed seed --dtype dtype` writes
// for the same config (and, as float32, those Model::initialize computes with): Hugging Face's
// initialization drawn with JAX's random numbers (docs/library.md). Throws kInvalidArgument for a
// bad config or dtype, kOutOfMemory when they do not fit.
EAGERLM_API Parameters initialize_parameters(const ModelConfig& config, uint64_t seed = 0,
                                             const std::string& dtype = "F32");

}  // namespace eagerlm
