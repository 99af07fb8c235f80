// `eagerlm info -m DIR [--json]`: what a model directory holds — config, parameter count,
// bytes and storage dtypes — after validating every tensor, without loading the weights.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "models/gpt2/checkpoint.h"
#include "tools/cli/commands.h"

namespace eagerlm::cli {

namespace {

struct InfoOptions {
  std::string model_dir;
  bool json = false;
};

int run_info(const InfoOptions& o) {
  const gpt2::CheckpointSummary s = gpt2::inspect_checkpoint(o.model_dir);
  const gpt2::Config& c = s.config;
  std::vector<std::string> dtypes;
  for (DType t : s.dtypes) dtypes.push_back(dtype_name(t));
  if (o.json) {
    nlohmann::json j = {
        {"model", s.dir},
        {"config", nlohmann::json::parse(c.to_json())},
        {"parameters", s.parameter_count},
        {"bytes", s.parameter_bytes},
        {"dtypes", dtypes},
        {"files", s.files},
        {"tensor_names_prefixed", s.prefixed},
    };
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::string dtype_list;
  for (const auto& d : dtypes) dtype_list += (dtype_list.empty() ? "" : ", ") + d;
  std::printf("model        %s\n", s.dir.c_str());
  std::printf("config       n_layer=%lld n_embd=%lld n_head=%lld n_positions=%lld vocab_size=%lld\n",
              (long long)c.n_layer, (long long)c.n_embd, (long long)c.n_head, (long long)c.n_positions,
              (long long)c.vocab_size);
  std::printf("parameters   %lld (%.1f MB stored, %.1f MB as F32 in memory)\n", (long long)s.parameter_count,
              double(s.parameter_bytes) / 1e6, double(s.parameter_count) * 4 / 1e6);
  std::printf("dtype        %s\n", dtype_list.c_str());
  for (const auto& f : s.files) std::printf("file         %s\n", f.c_str());
  return 0;
}

}  // namespace

Subcommand add_info_command(CLI::App& root) {
  auto opts = std::make_shared<InfoOptions>();
  CLI::App* app = root.add_subcommand("info", "Validate a Hugging Face GPT-2 directory and describe it");
  app->add_option("-m,--model", opts->model_dir, "Model directory (config.json + model.safetensors)")->required();
  app->add_flag("--json", opts->json, "Print one JSON object");
  return {app, [opts] { return run_info(*opts); }};
}

}  // namespace eagerlm::cli
