// The one way a model comes into eagerlm, for every front end (the C++ and C API, the CLI, the
// benchmarks and conformance tools): loaded from a Hugging Face GPT-2 directory with the tokenizer
// files it holds, or initialized with fresh weights from a preset name or a config.json, with
// GPT-2's built-in tokenizer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/tokenizer/tokenizer.h"
#include "models/gpt2/config.h"
#include "models/gpt2/model.h"

namespace eagerlm::gpt2 {

struct ModelSource {
  std::string directory;         // a Hugging Face directory to load, or
  std::string preset_or_config;  // a preset name, a config.json, or a directory holding one, or
  std::optional<Config> config;  // a config given as values (validated here)
  uint64_t seed = 0;             // for initialized weights
  // The weight matrices' type (nullopt: as stored: a bf16/f16/int8 checkpoint keeps its type,
  // initialized weights are f32), and the KV cache's (F32, BF16 or F16).
  std::optional<WeightType> weights;
  DType kv_type = DType::kF32;
  GemmMath gemm_math = GemmMath::kFp32;  // the products' math (ModelOptions::gemm_math)
};

struct LoadedModel {
  std::shared_ptr<const Model> model;
  Tokenizer tokenizer;
  std::string description;  // the directory, or "gpt2 initialized from seed 0"
  bool random_weights = false;
  double load_ms = 0;
  // Why text cannot be encoded for this model ("" when it can; see check_vocabularies).
  std::string text_problem;
};

// Loads or initializes the model on `device`, reporting (bytes done, total) to `progress`.
// Throws Error: kInvalidArgument for a source that names neither or both, kIo / kInvalidFile for
// the files, kUnsupported for an unusable device, kOutOfMemory.
LoadedModel load_model(const ModelSource& source, Device device, const ProgressFn& progress = {});

// A model over parameters that exist already (a caller's memory, matched by parameter_match.h),
// with GPT-2's built-in tokenizer, as an initialized model has; `description` names it. Float32
// matrices are used in place (ModelOptions::float32_in_place).
LoadedModel model_from_parameters(const Config& config, ParameterTensors parameters, Device device,
                                  const std::string& description);

// The model's vocabulary against its tokenizer's, decided at load time rather than found
// mid-generation. A model vocabulary larger than the tokenizer's (padded: nanoGPT pads 50257 to
// 50304) is fine: sampling_vocab() keeps the padding ids from ever being generated. A smaller one
// cannot encode text: with tokenizer files of its own that is a broken directory (Error
// kInvalidFile naming `source`); with none (GPT-2's built-in vocabulary standing in), the model
// still runs on token ids, and the returned explanation is what every text operation then says.
std::string check_vocabularies(const Config& config, const Tokenizer& tokenizer, bool tokenizer_from_files,
                               const std::string& source);
// The ids a generator may sample: those the tokenizer knows (the model's padding ids never).
int64_t sampling_vocab(const Config& config, const Tokenizer& tokenizer);

// The config of a preset name ("gpt2", ...), of a config.json file, or of the config.json in a
// directory. Throws kInvalidArgument naming the presets when `spec` is none of them.
Config config_for(const std::string& spec);

}  // namespace eagerlm::gpt2
