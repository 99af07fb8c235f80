#include "models/gpt2/model_source.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "engine/core/error.h"
#include "engine/core/text.h"
#include "models/gpt2/checkpoint.h"
#include "models/gpt2/initializer.h"

namespace eagerlm::gpt2 {

namespace fs = std::filesystem;

Config config_for(const std::string& spec) {
  const auto& presets = preset_names();
  if (std::find(presets.begin(), presets.end(), spec) != presets.end()) return preset(spec);
  std::string names;
  for (const auto& p : presets) names += (names.empty() ? "" : ", ") + p;
  if (spec.empty())
    throw_error(ErrorCode::kInvalidArgument,
                "initialize: expected a preset (" + names + ") or a config.json path, got an empty string");
  std::error_code ec;
  fs::path path(spec);
  if (fs::is_directory(path, ec)) path /= "config.json";
  if (!fs::is_regular_file(path, ec))
    throw_error(ErrorCode::kIo, "initialize: " + quoted_text(spec) + " is neither a preset (" + names +
                                    ") nor a config.json file (or a directory holding one)");
  return config_from_file(path.string());
}

std::string check_vocabularies(const Config& config, const Tokenizer& tokenizer, bool tokenizer_from_files,
                               const std::string& source) {
  if (config.vocab_size >= tokenizer.vocab_size()) return "";
  const std::string what = source + ": the model's vocab_size " + std::to_string(config.vocab_size) +
                           " is smaller than the tokenizer's " + std::to_string(tokenizer.vocab_size()) + " tokens (" +
                           tokenizer.source() + ")";
  if (tokenizer_from_files)
    throw_error(ErrorCode::kInvalidFile, what + ": ids the tokenizer produces would have no embedding");
  return what + " and the directory has no tokenizer files of its own: give token ids, or add its tokenizer files";
}

int64_t sampling_vocab(const Config& config, const Tokenizer& tokenizer) {
  return std::min<int64_t>(config.vocab_size, tokenizer.vocab_size());
}

LoadedModel load_model(const ModelSource& source, Device device, const ProgressFn& progress) {
  const auto start = std::chrono::steady_clock::now();
  if (int(!source.directory.empty()) + int(!source.preset_or_config.empty()) + int(source.config.has_value()) != 1)
    throw_error(ErrorCode::kInvalidArgument,
                "a model source needs exactly one of a directory, a preset/config or a config");
  LoadedModel out{nullptr, Tokenizer::gpt2(), "", false, 0, ""};
  ModelOptions options;
  options.weights = source.weights;
  options.kv_type = source.kv_type;
  options.gemm_math = source.gemm_math;
  options.progress = progress;
  if (!source.directory.empty()) {
    // The tokenizer first: a broken tokenizer file fails before gigabytes of weights load.
    out.tokenizer = Tokenizer::for_model_directory(source.directory);
    const bool own_tokenizer = !out.tokenizer.is_builtin();
    out.text_problem =
        check_vocabularies(inspect_checkpoint(source.directory).config, out.tokenizer, own_tokenizer, source.directory);
    out.model = Model::load(source.directory, device, options);
    out.description = source.directory;
  } else {
    const std::string name = source.config ? std::string("config") : source.preset_or_config;
    const Config config = source.config ? *source.config : config_for(source.preset_or_config);
    config.validate(name);
    out.text_problem = check_vocabularies(config, out.tokenizer, false, name);
    InitOptions init;
    init.seed = source.seed;
    init.device = device;
    init.progress = progress;
    // Drawn in float32 on the device, then converted (on the host) when another type is asked.
    out.model = Model::from_parameters(config, initialize(config, init), device, options);
    out.description = name + " initialized from seed " + std::to_string(source.seed);
    out.random_weights = true;
  }
  out.load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

LoadedModel model_from_parameters(const Config& config, ParameterTensors parameters, Device device,
                                  const std::string& description) {
  const auto start = std::chrono::steady_clock::now();
  LoadedModel out{nullptr, Tokenizer::gpt2(), description, false, 0, ""};
  out.text_problem = check_vocabularies(config, out.tokenizer, false, description);
  // The caller's float32 memory is used in place, as the library's from_parameters promises.
  ModelOptions in_place;
  in_place.float32_in_place = true;
  out.model = Model::from_parameters(config, std::move(parameters), device, in_place);
  out.load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace eagerlm::gpt2
