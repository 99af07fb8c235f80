// The named parameters of a GPT-2 model, with shapes derived from the config alone. This list is
// the single source for the loader (what must be in a checkpoint), the initializer (what to draw
// and how) and `--dry-run` (what would be allocated). Names are Hugging Face's, without the
// `transformer.` prefix; linear (Conv1D) weights are [in, out].
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/tensor.h"
#include "engine/core/weight_tensor.h"
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
  // Set for the weight matrices that take the model's weight type (f32, bf16, f16, int8): every
  // linear layer's weight (input-major) and the tied embedding wte (output-major). The others
  // (wpe, biases, layer norms) are always float32 to compute.
  std::optional<WeightLayout> matrix = std::nullopt;
  // A matrix held in panels: its outputs (`shape` is then the padded panels' tensor).
  int64_t panel_outputs = 0;
};

// The name of an int8 weight's scale tensor in a checkpoint: "<name>_scale", e.g.
// "h.0.attn.c_attn.weight_scale" (docs/formats.md, "int8 checkpoints").
std::string scale_tensor_name(const std::string& weight_name);

// Canonical order: wte, wpe, then each block h.0 .. h.{n_layer-1}, then ln_f.
std::vector<ParameterSpec> parameter_specs(const Config& config);

int64_t parameter_count(const Config& config);

// A model's parameters: specs in canonical order and one tensor per spec (same index), each
// contiguous: as stored in a checkpoint (F32, F16, BF16, or I8 for an int8 weight matrix), or as
// a model holds them (float32, and its weight matrices in its weight type). `scales` is empty,
// or has one entry per spec: the F32 scales of an I8 matrix, undefined for every other tensor.
struct ParameterTensors {
  std::vector<ParameterSpec> specs;
  std::vector<Tensor> tensors;
  std::vector<Tensor> scales;

  const Tensor& get(const std::string& name) const;  // throws kInternal if absent
  // A weight matrix (spec.matrix set) with its scales, as the ops take it.
  WeightTensor weight(const std::string& name) const;
  const Tensor& scales_of(size_t i) const;  // undefined Tensor when there are none
  size_t total_bytes() const;               // tensors and scales
};

// `parameters` (a model's, in canonical order) with every weight matrix in its config's layout: a
// rearranged host copy of each one held otherwise (Backend::linear_layout), the rest shared. What
// a checkpoint holds and what Model::from_parameters takes.
ParameterTensors in_config_layout(const Config& config, const ParameterTensors& parameters);

// The weight type a checkpoint's matrices share (nullopt when they differ, or a matrix's dtype is
// no weight type): what a model keeps unless asked for another.
std::optional<WeightType> stored_weight_type(const ParameterTensors& parameters);

}  // namespace eagerlm::gpt2
