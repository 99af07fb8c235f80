// A GPT-2 model ready to run: its config and its weights on one device, its weight matrices in
// one weight type (f32, bf16, f16 or int8: engine/core/weight_tensor.h) and everything else in
// float32, plus the KV-cache type its forward passes use unless told otherwise. Immutable once
// built, so one Model can be shared by several generators in several threads.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/tensor.h"
#include "engine/core/weight_tensor.h"
#include "kernels/common/gemm_math.h"
#include "models/gpt2/config.h"
#include "models/gpt2/parameters.h"

namespace eagerlm::gpt2 {

// One transformer block's weights. Linear weights are [in, out] (Conv1D layout: input-major).
struct BlockWeights {
  Tensor ln_1_weight, ln_1_bias;  // [d]
  WeightTensor attn_weight;       // [d, 3d]  (q | k | v, each head-major)
  Tensor attn_bias;               // [3d]
  WeightTensor attn_proj_weight;  // [d, d]
  Tensor attn_proj_bias;          // [d]
  Tensor ln_2_weight, ln_2_bias;  // [d]
  WeightTensor fc_weight;         // [d, m]
  Tensor fc_bias;                 // [m]
  WeightTensor mlp_proj_weight;   // [m, d]
  Tensor mlp_proj_bias;           // [d]
};

struct ModelWeights {
  WeightTensor wte;  // [vocab, d], output-major: the token embedding and the output head (tied)
  // The output head as the backend reads it fastest: wte itself, or a copy of it in panels
  // (where the backend holds the layers so: Backend::linear_layout).
  WeightTensor head;
  Tensor wpe;  // [n_positions, d]
  std::vector<BlockWeights> blocks;
  Tensor ln_f_weight, ln_f_bias;  // [d]
};

// Called with (bytes done, bytes total) while weights load, convert or upload.
using ProgressFn = std::function<void(size_t, size_t)>;

struct ModelOptions {
  // The weight matrices' type; nullopt keeps the type the parameters are stored in when they all
  // share one (a bf16 checkpoint stays bf16, an int8 one int8), else float32.
  std::optional<WeightType> weights;
  DType kv_type = DType::kF32;  // the KV cache of its forward passes: F32, BF16 or F16
  // The math of its forward passes' products (checked at load against the device and the weight
  // type, Queue::set_gemm_math): kFp32; on CUDA kTf32/kBf16 tensor cores; on the CPU kBf16 for
  // bf16 weights (AMX tiles or AVX512_BF16 dot products, activations rounded to bf16).
  GemmMath gemm_math = GemmMath::kFp32;
  // Float32 matrices stay as given, read in place (input-major; the head is wte itself), instead
  // of being copied into the layout the backend reads fastest (Backend::linear_layout: panels on
  // AVX2 and AVX-512 CPUs, where one sequence decodes 1.15-1.7x faster). For parameters in the caller's
  // memory, which the library's from_parameters promises not to copy.
  bool float32_in_place = false;
  ProgressFn progress;
};

class Model {
 public:
  // Takes ownership of `params` (any storage dtype; int8 matrices with their scales), converting
  // the weight matrices to the chosen type and everything else to float32 (on all cores, with
  // progress), and moving them to `device` where needed. Shapes must match
  // parameter_specs(config). Throws kInvalidArgument for a parameter that does not fit (an I8
  // tensor that is no weight matrix, missing or misshapen scales, int8 asked of a matrix whose
  // inputs are no multiple of 32).
  static std::shared_ptr<const Model> from_parameters(const Config& config, ParameterTensors params, Device device,
                                                      const ModelOptions& options = {});
  // Loads a Hugging Face GPT-2 directory (see models/gpt2/checkpoint.h).
  static std::shared_ptr<const Model> load(const std::string& dir, Device device, const ModelOptions& options = {});

  const Config& config() const { return config_; }
  Device device() const { return device_; }
  const ModelWeights& weights() const { return weights_; }
  // What the model holds, in spec order (the weight matrices in weight_type(), with scales). A
  // linear layer's spec says how it is held: input-major [in, out] as in a checkpoint, or
  // output-major [out, in] where the backend runs it faster so (bf16 math on AMX).
  const ParameterTensors& parameters() const { return params_; }
  int64_t parameter_count() const;
  WeightType weight_type() const { return weight_type_; }
  DType kv_type() const { return kv_type_; }
  GemmMath gemm_math() const { return gemm_math_; }
  // Bytes of the weight matrices as held, scales included (each once: a copy of the head in
  // panels, read by decode instead of wte, is not counted).
  size_t matrix_bytes() const;

 private:
  Model(const Config& config, ParameterTensors params, Device device, WeightType weights, DType kv_type,
        GemmMath gemm_math, bool float32_in_place);
  Config config_;
  ParameterTensors params_;
  Device device_;
  WeightType weight_type_;
  DType kv_type_;
  GemmMath gemm_math_;
  ModelWeights weights_;
};

}  // namespace eagerlm::gpt2
