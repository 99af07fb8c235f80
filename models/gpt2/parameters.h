// The named parameters of a GPT-2 model, with shapes derived from the config alone. This list is
// the single source for the loader (what must be in a checkpoint), the initializer (what to draw
// and how) and `--dry-run` (what would be allocated). Names are Hugging Face's, without the
// `transformer.` prefix; linear (Conv1D) weights are [in, out].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/tensor.h"
#include "models/gpt2/config.h"

namespace eagerlm::gpt2 {

// How Hugging Face's GPT2PreTrainedModel._init_weights initializes a parameter.
enum class InitKind {
  kNormal,          // N(0, initializer_range): embeddings and linear weights
  kNormalResidual,  // N(0, initializer_range / sqrt(2·n_layer)): attn.c_proj and mlp.c_proj weights
  kZeros,           // biases, layer-norm biases
  kOnes,            // layer-norm weights
};

struct ParameterSpec {
  std::string name;  // e.g. "h.3.attn.c_attn.weight"
  Shape shape;
  InitKind init;
  double stddev = 0.0;  // for the normal kinds; 0 otherwise
};

// Canonical order: wte, wpe, then each block h.0 .. h.{n_layer-1}, then ln_f.
std::vector<ParameterSpec> parameter_specs(const Config& config);

int64_t parameter_count(const Config& config);

// A model's parameters: specs in canonical order and one tensor per spec (same index), each
// contiguous, float32 for compute (or the requested storage dtype for `eagerlm init --dtype`).
struct ParameterTensors {
  std::vector<ParameterSpec> specs;
  std::vector<Tensor> tensors;

  const Tensor& get(const std::string& name) const;  // throws kInternal if absent
  size_t total_bytes() const;
};

}  // namespace eagerlm::gpt2
