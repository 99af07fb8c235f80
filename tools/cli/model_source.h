// Where a command's model comes from: `-m DIR` (a Hugging Face GPT-2 directory) or
// `--preset NAME` (weights initialized by eagerlm from `--init-seed`, meaningless text, no
// files needed). With neither, the default is GPT-2 124M from seed 0. Shared by the commands
// that run a model (generate, bench).
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "engine/core/device.h"
#include "engine/tokenizer/tokenizer.h"
#include "models/gpt2/forward.h"
#include "models/gpt2/model.h"

namespace eagerlm::cli {

struct ModelSource {
  std::string model_dir;
  std::string preset;
  std::string init_seed = "0";  // parsed by parse_u64_flag
  std::string device = "cpu";
  std::string gemm_math = "fp32";  // --gemm-math (CUDA only beyond fp32)
  bool no_cuda_graphs = false;     // --no-cuda-graphs
};

void add_model_options(CLI::App& app, ModelSource& source);

struct LoadedModel {
  std::shared_ptr<const gpt2::Model> model;
  Tokenizer tokenizer;
  std::string description;  // "models/gpt2-local" or "gpt2 initialized from seed 0"
  bool random_weights = false;
  double load_ms = 0;
};

// Loads or initializes the model; shows progress on a terminal unless `quiet`. Says on stderr
// when the weights are random (unless quiet).
LoadedModel load_model(const ModelSource& source, bool quiet);

// Parses --device; throws UsageError naming the flag.
Device parse_device(const std::string& name);

// A ForwardLimits carrying the execution choices (--gemm-math, --no-cuda-graphs), for the
// command to fill in its sizes; throws UsageError when --gemm-math asks tensor cores of the CPU.
gpt2::ForwardLimits execution_limits(const ModelSource& source);

}  // namespace eagerlm::cli
