// `eagerlm quantize -m DIR --weights f32|bf16|f16|int8 --out DIR2 [--force] [-t N] [--json]`:
// rewrites a checkpoint with its weight matrices (wte and every linear layer) in another type,
// the rest in float32: the same conversion a load with --weights does (models/gpt2/model.h), then
// written as it is held (int8 with a "<name>_scale" tensor per matrix: docs/formats.md), so the
// new directory loads with no conversion and `info` describes it.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/model_source.h"
#include "cli/progress_bar.h"
#include "engine/core/error.h"
#include "models/gpt2/checkpoint.h"
#include "models/gpt2/model.h"

namespace eagerlm::cli {
namespace {

namespace fs = std::filesystem;

struct QuantizeOptions {
  std::string model_dir;
  std::string weights;
  std::string out_dir;
  bool force = false;
  int threads = 0;
  bool json = false;
};

int run_quantize(const QuantizeOptions& o) {
  const auto type = parse_weights_flag(o.weights);
  std::error_code ec;
  if (fs::equivalent(o.model_dir, o.out_dir, ec))
    throw UsageError("--out " + o.out_dir + ": is the model directory itself; write to another directory");
  check_out_dir(o.out_dir, o.force);
  apply_threads(o.threads);

  gpt2::ModelOptions options;
  options.weights = type;
  ProgressBar load_bar("converting", !o.json);
  options.progress = [&](size_t d, size_t t) { load_bar.update(d, t); };
  const auto model = gpt2::Model::load(o.model_dir, Device::kCpu, options);
  load_bar.finish();

  ProgressBar write_bar("writing", !o.json);
  gpt2::save_checkpoint(
      o.out_dir, model->config(), model->parameters(), [&](uint64_t d, uint64_t t) { write_bar.update(d, t); },
      {{"eagerlm_weights", weight_type_name(model->weight_type())}, {"eagerlm_quantized_from", o.model_dir}});
  write_bar.finish();

  const gpt2::CheckpointSummary written = gpt2::inspect_checkpoint(o.out_dir);
  if (o.json) {
    std::cout << nlohmann::json{{"model", o.model_dir},
                                {"out", o.out_dir},
                                {"weights", weight_type_name(model->weight_type())},
                                {"bytes", written.parameter_bytes},
                                {"int8_scales", written.scale_count}}
                     .dump(2)
              << "\n";
  } else {
    std::printf("wrote %s: weights %s, %.1f MB\n", o.out_dir.c_str(), weight_type_name(model->weight_type()),
                double(written.parameter_bytes) / 1e6);
  }
  return 0;
}

}  // namespace

Subcommand add_quantize_command(CLI::App& root) {
  auto o = std::make_shared<QuantizeOptions>();
  CLI::App* app = root.add_subcommand("quantize", "Rewrite a checkpoint with its weight matrices in another type");
  app->add_option("-m,--model", o->model_dir, "Model directory (config.json + model.safetensors)")->required();
  app->add_option("--weights", o->weights, "f32, bf16, f16 or int8 (per-block scales, docs/formats.md)")
      ->required()
      ->check(CLI::IsMember({"f32", "bf16", "f16", "int8"}));
  app->add_option("--out", o->out_dir, "Directory to write (config.json + model.safetensors)")->required();
  app->add_flag("--force", o->force, "Replace config.json and model.safetensors in a non-empty --out");
  add_threads_option(*app, o->threads);
  app->add_flag("--json", o->json, "Print one JSON object");
  return {app, [o] { return run_quantize(*o); }};
}

}  // namespace eagerlm::cli
