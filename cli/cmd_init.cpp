// `eagerlm init (--preset NAME | --config FILE) [--seed N] [--device cpu|cuda] [-t N]
//  [--dtype f32|f16|bf16] [--out DIR [--force]] [--dry-run] [--json]`: fresh GPT-2 parameters
// (models/gpt2/initializer.h: Hugging Face's scheme, JAX's random numbers). Without --out it
// initializes in memory and reports size, time and checksum; with --out it writes a Hugging Face
// directory (config.json + model.safetensors). --dry-run lists the parameters without allocating.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/progress_bar.h"
#include "engine/core/device.h"
#include "engine/core/error.h"
#include "engine/io/atomic_file.h"
#include "models/gpt2/checkpoint.h"
#include "models/gpt2/config.h"
#include "models/gpt2/initializer.h"
#include "models/gpt2/parameters.h"

namespace eagerlm::cli {
namespace {

namespace fs = std::filesystem;

struct InitCliOptions {
  std::string preset;
  std::string config_file;
  std::string seed = "0";  // parsed strictly by parse_seed (CLI11 would wrap "-1")
  std::string device = "cpu";
  int threads = 0;
  std::string dtype = "f32";
  std::string out_dir;
  bool force = false;
  bool dry_run = false;
  bool json = false;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

nlohmann::json parameter_list(const std::vector<gpt2::ParameterSpec>& specs, DType dtype) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& spec : specs)
    list.push_back({{"name", spec.name},
                    {"shape", spec.shape.to_vector()},
                    {"dtype", dtype_name(dtype)},
                    {"bytes", gpt2::parameter_bytes(spec, dtype)}});
  return list;
}

// Writes config.json and model.safetensors (Hugging Face names and layouts) into o.out_dir.
std::vector<std::string> write_model(const InitCliOptions& o, uint64_t seed, const gpt2::Config& config,
                                     const gpt2::ParameterTensors& params) {
  const std::map<std::string, std::string> metadata = {
      {"eagerlm_init", "jax.random.normal(fold_in(jax.random.key(seed), fnv1a32(name)), shape, float32) * stddev"},
      {"eagerlm_init_seed", std::to_string(seed)}};
  ProgressBar bar("writing", !o.json);
  gpt2::save_checkpoint(
      o.out_dir, config, params, [&](uint64_t d, uint64_t t) { bar.update(d, t); }, metadata);
  bar.finish();
  return {(fs::path(o.out_dir) / "config.json").string(), (fs::path(o.out_dir) / "model.safetensors").string()};
}

int run_init(const InitCliOptions& o) {
  if (o.preset.empty() == o.config_file.empty())
    throw UsageError("init: give exactly one of --preset NAME or --config FILE");
  const uint64_t seed = parse_u64_flag("--seed", o.seed);
  const DType dtype = *dtype_from_cli_name(o.dtype);  // CLI11 checked the name
  const Device device = *device_from_name(o.device);
  apply_threads(o.threads);

  // config_from_file validates every field, naming the file; presets are valid by construction.
  const gpt2::Config config = o.preset.empty() ? gpt2::config_from_file(o.config_file) : gpt2::preset(o.preset);
  const std::vector<gpt2::ParameterSpec> specs = gpt2::parameter_specs(config);
  const int64_t count = gpt2::parameter_count(config);
  const size_t total_bytes = gpt2::total_parameter_bytes(specs, dtype);
  if (!o.out_dir.empty()) check_out_dir(o.out_dir, o.force);

  nlohmann::json report = {{"parameters", parameter_list(specs, dtype)},
                           {"total_parameters", count},
                           {"total_bytes", total_bytes},
                           {"dtype", dtype_name(dtype)},
                           {"device", device_name(device)},
                           {"seed", seed}};
  if (o.dry_run) {
    if (o.json) {
      std::cout << report.dump(2) << "\n";
    } else {
      for (const auto& spec : specs)
        std::printf("%-28s %-16s %-5s %12zu\n", spec.name.c_str(), spec.shape.to_string().c_str(), dtype_name(dtype),
                    gpt2::parameter_bytes(spec, dtype));
      std::printf("total: %lld parameters, %zu bytes (%.1f MB) as %s; nothing allocated (--dry-run)\n",
                  static_cast<long long>(count), total_bytes, double(total_bytes) / 1e6, dtype_name(dtype));
    }
    return 0;
  }

  gpt2::InitOptions options;
  options.seed = seed;
  options.device = device;
  options.dtype = dtype;
  // Starting the device (on CUDA: loading the module, creating the context) is not part of the
  // initialization's time; it is reported apart.
  const auto device_start = std::chrono::steady_clock::now();
  (void)device_available_bytes(device);
  report["device_start_seconds"] = seconds_since(device_start);
  ProgressBar bar("initializing", !o.json && total_bytes >= (size_t(64) << 20));
  options.progress = [&](size_t done, size_t total) { bar.update(done, total); };
  const auto start = std::chrono::steady_clock::now();
  const gpt2::ParameterTensors params = gpt2::initialize(config, options);
  const double seconds = seconds_since(start);
  bar.finish();
  const uint64_t checksum = gpt2::parameters_checksum(params);

  report["seconds"] = seconds;
  report["checksum"] = hex64(checksum);
  std::vector<std::string> files;
  if (!o.out_dir.empty()) {
    const auto write_start = std::chrono::steady_clock::now();
    files = write_model(o, seed, config, params);
    report["out"] = o.out_dir;
    report["files"] = files;
    report["write_seconds"] = seconds_since(write_start);
  }
  if (o.json) {
    std::cout << report.dump(2) << "\n";
    return 0;
  }
  std::printf("initialized %s: %lld parameters, %.1f MB as %s on %s, seed %llu\n",
              o.preset.empty() ? o.config_file.c_str() : o.preset.c_str(), static_cast<long long>(count),
              double(total_bytes) / 1e6, dtype_name(dtype), device_name(device), static_cast<unsigned long long>(seed));
  std::printf("time %.3f s (%.2f GB/s), checksum %s\n", seconds, double(total_bytes) / seconds / 1e9,
              hex64(checksum).c_str());
  for (const auto& f : files) std::printf("wrote %s\n", f.c_str());
  return 0;
}

}  // namespace

Subcommand add_init_command(CLI::App& root) {
  auto o = std::make_shared<InitCliOptions>();
  CLI::App* app =
      root.add_subcommand("init", "Initialize GPT-2 parameters (Hugging Face's scheme, JAX-compatible random numbers)");
  auto* preset =
      app->add_option("--preset", o->preset, "Published GPT-2 size")->check(CLI::IsMember(gpt2::preset_names()));
  auto* config = app->add_option("--config", o->config_file, "Hugging Face config.json describing the model")
                     ->check(CLI::ExistingFile);
  preset->excludes(config);
  app->add_option("--seed", o->seed, "Random seed, 0 .. 2^64-1 (as jax.random.key(seed))")
      ->type_name("UINT")
      ->capture_default_str();
  app->add_option("--device", o->device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  add_threads_option(*app, o->threads);
  app->add_option("--dtype", o->dtype, "Storage type of the parameters: f32, f16 or bf16")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}))
      ->capture_default_str();
  auto* out = app->add_option("--out", o->out_dir, "Write config.json + model.safetensors into this directory");
  app->add_flag("--force", o->force, "Allow --out to name a non-empty directory")->needs(out);
  app->add_flag("--dry-run", o->dry_run, "List the parameters and totals without allocating them");
  app->add_flag("--json", o->json, "Print one JSON object");
  return {app, [o] { return run_init(*o); }};
}

}  // namespace eagerlm::cli
