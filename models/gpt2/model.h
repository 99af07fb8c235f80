// A GPT-2 model ready to run: its config and its float32 weights on one device. Immutable once
// built, so one Model can be shared by several generators in several threads.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/tensor.h"
#include "models/gpt2/config.h"
#include "models/gpt2/parameters.h"

namespace eagerlm::gpt2 {

// One transformer block's weights. Linear weights are [in, out] (Conv1D layout).
struct BlockWeights {
  Tensor ln_1_weight, ln_1_bias;          // [d]
  Tensor attn_weight, attn_bias;          // [d, 3d], [3d]  (q | k | v, each head-major)
  Tensor attn_proj_weight, attn_proj_bias;  // [d, d], [d]
  Tensor ln_2_weight, ln_2_bias;          // [d]
  Tensor fc_weight, fc_bias;              // [d, m], [m]
  Tensor mlp_proj_weight, mlp_proj_bias;  // [m, d], [d]
};

struct Weights {
  Tensor wte;  // [vocab, d]; also the output head (tied)
  Tensor wpe;  // [n_positions, d]
  std::vector<BlockWeights> blocks;
  Tensor ln_f_weight, ln_f_bias;  // [d]
};

// Called with (bytes done, bytes total) while weights load or upload.
using ProgressFn = std::function<void(size_t, size_t)>;

class Model {
 public:
  // Takes ownership of `params` (any storage dtype), converting to float32 and moving to
  // `device` where needed. Shapes must match parameter_specs(config).
  static std::shared_ptr<const Model> from_parameters(const Config& config, ParameterTensors params,
                                                      Device device, const ProgressFn& progress = {});
  // Loads a Hugging Face GPT-2 directory (see models/gpt2/checkpoint.h).
  static std::shared_ptr<const Model> load(const std::string& dir, Device device,
                                           const ProgressFn& progress = {});

  const Config& config() const { return config_; }
  Device device() const { return device_; }
  const Weights& weights() const { return weights_; }
  const ParameterTensors& parameters() const { return params_; }
  int64_t parameter_count() const;

 private:
  Model(const Config& config, ParameterTensors params, Device device);
  Config config_;
  ParameterTensors params_;
  Device device_;
  Weights weights_;
};

}  // namespace eagerlm::gpt2
