// `eagerlm info -m DIR [--json]`: what a model directory holds — config, parameter count,
// bytes and storage dtypes — after validating every tensor, without loading the weights.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "engine/tokenizer/tokenizer.h"
#include "models/gpt2/checkpoint.h"
#include "models/gpt2/model_source.h"

namespace eagerlm::cli {

namespace {

struct InfoOptions {
  std::string model_dir;
  bool json = false;
};

int run_info(const InfoOptions& o) {
  const gpt2::CheckpointSummary s = gpt2::inspect_checkpoint(o.model_dir);
  const gpt2::Config& c = s.config;
  // The tokenizer files are validated too, and against the model's vocabulary, as a load would.
  const Tokenizer tokenizer = Tokenizer::for_model_directory(o.model_dir);
  const bool own_tokenizer = !tokenizer.is_builtin();
  const std::string text_problem = gpt2::check_vocabularies(c, tokenizer, own_tokenizer, o.model_dir);
  const int64_t sampled = gpt2::sampling_vocab(c, tokenizer);
  std::vector<std::string> dtypes;
  for (DType t : s.dtypes) dtypes.push_back(dtype_name(t));
  if (o.json) {
    nlohmann::json j = {
        {"model", s.dir},
        {"config", nlohmann::json::parse(c.to_json())},
        {"parameters", s.parameter_count},
        {"bytes", s.parameter_bytes},
        {"dtypes", dtypes},
        {"weights", s.weights ? weight_type_name(*s.weights) : "mixed"},
        {"int8_scales", s.scale_count},
        {"files", s.files},
        {"tensor_names_prefixed", s.prefixed},
        {"tokenizer", {{"source", tokenizer.source()}, {"vocab_size", tokenizer.vocab_size()}, {"encodes_text", text_problem.empty()}}},
        {"sampled_vocab", sampled},
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
  std::printf("parameters   %lld (%.1f MB stored, %.1f MB as F32)\n", (long long)s.parameter_count,
              double(s.parameter_bytes) / 1e6, double(s.parameter_count) * 4 / 1e6);
  std::printf("dtype        %s\n", dtype_list.c_str());
  // What a load keeps unless --weights asks for another type (mixed matrices load as f32).
  std::printf("weights      %s%s\n", s.weights ? weight_type_name(*s.weights) : "mixed (loaded as f32)",
              s.scale_count > 0 ? (" (" + std::to_string(s.scale_count) + " int8 scales)").c_str() : "");
  std::printf("tokenizer    %s (%d tokens)%s\n", tokenizer.source().c_str(), tokenizer.vocab_size(),
              sampled < c.vocab_size ? (" — ids from " + std::to_string(sampled) + " up are padding, never sampled").c_str()
                                     : "");
  if (!text_problem.empty()) std::printf("text         none: token ids only (the vocabulary is smaller than the tokenizer's)\n");
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
