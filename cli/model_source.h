// Where a command's model comes from: `-m DIR` (a Hugging Face GPT-2 directory) or
// `--preset NAME` (weights initialized by eagerlm from `--init-seed`, meaningless text, no files
// needed). With neither, the default is GPT-2 124M from seed 0. The flags of the commands that
// run a model (generate, bench), translated into the engine's one loader (models/gpt2/model_source.h).
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "eagerlm/model.hpp"
#include "engine/core/device.h"
#include "models/gpt2/forward.h"
#include "models/gpt2/model_source.h"

namespace eagerlm::cli {

struct ModelFlags {
  std::string model_dir;
  std::string preset;
  std::string init_seed = "0";  // parsed by parse_u64_flag
  std::string device = "cpu";
  std::string gemm_math = "fp32";  // --gemm-math (tf32 CUDA only; bf16 on the CPU for bf16 weights)
  bool no_cuda_graphs = false;     // --no-cuda-graphs
  std::string weights;             // --weights f32|bf16|f16|int8; empty: as the checkpoint stores them
  std::string kv_type = "f32";     // --kv-type f32|bf16|f16
};

// Which of the model flags a command takes beyond the common ones.
struct ModelOptionSet {
  bool execution = true;     // --no-cuda-graphs (not for serve: the server's own)
  bool weights_all = false;  // --weights all: bench measures each type in turn
};
void add_model_options(CLI::App& app, ModelFlags& flags, ModelOptionSet set = {});

// The weight type --weights names (nullopt when not given); throws UsageError naming the flag.
std::optional<WeightType> parse_weights_flag(const std::string& name);

// Loads or initializes the model (its weights in --weights, its KV cache in --kv-type); shows progress on a terminal unless `quiet`. Says on stderr
// when the weights are random (unless quiet).
gpt2::LoadedModel load_model(const ModelFlags& flags, bool quiet);

// The same through the public API (for the front ends built on it, such as serve).
Model load_api_model(const ModelFlags& flags, bool quiet);
// The name a model goes by: the directory's last component, or the preset's name.
std::string model_name(const ModelFlags& flags);

// Parses --device; throws UsageError naming the flag.
Device parse_device(const std::string& name);

// --gemm-math, with what the flags alone rule out (tf32 off CUDA, bf16 with --weights all) as a
// UsageError; load_model and load_api_model hand it to the loader.
GemmMath parse_gemm_math_flag(const ModelFlags& flags);

// A ForwardLimits carrying the execution choices (--no-cuda-graphs; --gemm-math is the model's),
// for the command to fill in its sizes; throws UsageError for a --gemm-math the flags rule out.
gpt2::ForwardLimits execution_limits(const ModelFlags& flags);

}  // namespace eagerlm::cli
