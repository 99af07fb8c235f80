#include "cli/model_source.h"

#include <cstdio>
#include <vector>

#include "cli/cli_common.h"
#include "cli/command.h"
#include "cli/progress_bar.h"
#include "engine/core/dtype.h"
#include "engine/core/weight_tensor.h"

namespace eagerlm::cli {

void add_model_options(CLI::App& app, ModelFlags& s, ModelOptionSet set) {
  auto* m = app.add_option("-m,--model", s.model_dir, "Hugging Face GPT-2 directory (config.json + model.safetensors)");
  auto* p = app.add_option("--preset", s.preset, "Random-weight model of a published size, initialized by eagerlm")
                ->check(CLI::IsMember({"gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"}));
  m->excludes(p);
  app.add_option("--init-seed", s.init_seed, "Seed for --preset (and the default model)")->capture_default_str();
  app.add_option("--device", s.device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  std::vector<std::string> weight_names{"f32", "bf16", "f16", "int8"};
  if (set.weights_all) weight_names.push_back("all");
  app.add_option("--weights", s.weights,
                 std::string("Weight matrices as f32, bf16, f16 or int8 (converted at load; int8: per-block scales, "
                             "docs/formats.md); default: as the checkpoint stores them (random weights: f32)") +
                     (set.weights_all ? "; all: each in turn, side by side" : ""))
      ->check(CLI::IsMember(weight_names));
  app.add_option("--kv-type", s.kv_type, "KV cache elements: f32, bf16 or f16 (half the cache bytes)")
      ->check(CLI::IsMember({"f32", "bf16", "f16"}))
      ->capture_default_str();
  app.add_option("--gemm-math", s.gemm_math,
                 "Matrix products: fp32 (exact FP32); on CUDA tf32 or bf16 (tensor cores, inputs rounded); on "
                 "the CPU bf16 for bf16 weights (AMX tiles or AVX512_BF16, inputs rounded)")
      ->check(CLI::IsMember({"fp32", "tf32", "bf16"}))
      ->capture_default_str();
  if (!set.execution) return;
  app.add_flag("--no-cuda-graphs", s.no_cuda_graphs, "On CUDA, launch every decode step's kernels one by one");
}

GemmMath parse_gemm_math_flag(const ModelFlags& s) {
  const auto math = gemm_math_from_name(s.gemm_math);
  if (!math) throw UsageError("--gemm-math: expected fp32, tf32 or bf16, got '" + s.gemm_math + "'");
  // What only the flags can tell; the backend refuses the rest at load (bf16 math for weights
  // other than bf16, or on CPUs without a bf16 GEMM), naming the type or the kernels.
  if (*math == GemmMath::kTf32 && parse_device(s.device) != Device::kCuda)
    throw UsageError("--gemm-math tf32 needs --device cuda (the CPU computes in fp32, or bf16 for bf16 weights)");
  if (*math == GemmMath::kBf16 && parse_device(s.device) == Device::kCpu && s.weights == "all")
    throw UsageError("--gemm-math bf16 on the CPU is for bf16 weights: not with --weights all");
  return *math;
}

gpt2::ForwardLimits execution_limits(const ModelFlags& s) {
  (void)parse_gemm_math_flag(s);  // its errors before any work: the math itself comes with the model
  gpt2::ForwardLimits limits;
  limits.graphs = !s.no_cuda_graphs;
  return limits;
}

Device parse_device(const std::string& name) {
  auto d = device_from_name(name);
  if (!d) throw UsageError("--device: expected cpu or cuda, got '" + name + "'");
  return *d;
}

std::optional<WeightType> parse_weights_flag(const std::string& name) {
  if (name.empty()) return std::nullopt;
  const auto type = weight_type_from_name(name);
  if (!type) throw UsageError("--weights: expected f32, bf16, f16 or int8, got '" + name + "'");
  return type;
}

gpt2::LoadedModel load_model(const ModelFlags& s, bool quiet) {
  const Device device = parse_device(s.device);
  gpt2::ModelSource source;
  source.directory = s.model_dir;
  source.weights = parse_weights_flag(s.weights);
  const auto kv = dtype_from_cli_name(s.kv_type);
  if (!kv) throw UsageError("--kv-type: expected f32, bf16 or f16, got '" + s.kv_type + "'");
  source.kv_type = *kv;
  source.gemm_math = parse_gemm_math_flag(s);
  if (s.model_dir.empty()) {
    source.preset_or_config = s.preset.empty() ? "gpt2" : s.preset;
    source.seed = parse_u64_flag("--init-seed", s.init_seed);
  }
  ProgressBar bar(s.model_dir.empty() ? "initializing" : "loading", !quiet);
  gpt2::LoadedModel out = gpt2::load_model(source, device, [&](size_t d, size_t t) { bar.update(d, t); });
  bar.finish();
  if (out.random_weights && !quiet)
    std::fprintf(stderr,
                 "eagerlm: no -m given: using %s (random weights: the text is meaningless).\n"
                 "eagerlm: for real text, point -m at a Hugging Face GPT-2 directory "
                 "(config.json + model.safetensors).\n",
                 out.description.c_str());
  return out;
}

Model load_api_model(const ModelFlags& s, bool quiet) {
  const Device device = parse_device(s.device);
  ProgressBar bar(s.model_dir.empty() ? "initializing" : "loading", !quiet);
  LoadOptions options;
  options.weights = s.weights;
  options.kv_type = s.kv_type;
  options.gemm_math = gemm_math_name(parse_gemm_math_flag(s));
  options.progress = [&](size_t d, size_t t) { bar.update(d, t); };
  if (!s.model_dir.empty()) {
    Model model = Model::load(s.model_dir, device, options);
    bar.finish();
    return model;
  }
  const std::string preset = s.preset.empty() ? "gpt2" : s.preset;
  Model model = Model::initialize(preset, parse_u64_flag("--init-seed", s.init_seed), device, options);
  bar.finish();
  if (!quiet)
    std::fprintf(stderr, "eagerlm: using %s (random weights: the text is meaningless; -m DIR serves a real model)\n",
                 model.info().source.c_str());
  return model;
}

std::string model_name(const ModelFlags& s) {
  if (s.model_dir.empty()) return s.preset.empty() ? "gpt2" : s.preset;
  std::string dir = s.model_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const size_t slash = dir.rfind('/');
  return slash == std::string::npos ? dir : dir.substr(slash + 1);
}

}  // namespace eagerlm::cli
