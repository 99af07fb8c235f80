#include "tools/cli/model_source.h"

#include <chrono>
#include <cstdio>

#include "models/gpt2/initializer.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/command.h"
#include "tools/cli/progress_bar.h"

namespace eagerlm::cli {

void add_model_options(CLI::App& app, ModelSource& s) {
  auto* m = app.add_option("-m,--model", s.model_dir, "Hugging Face GPT-2 directory (config.json + model.safetensors)");
  auto* p = app.add_option("--preset", s.preset, "Random-weight model of a published size, initialized by eagerlm")
                ->check(CLI::IsMember({"gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"}));
  m->excludes(p);
  app.add_option("--init-seed", s.init_seed, "Seed for --preset (and the default model)")->capture_default_str();
  app.add_option("--device", s.device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  app.add_option("--gemm-math", s.gemm_math,
                 "Matrix products on CUDA: fp32 (exact FP32), tf32 or bf16 (tensor cores, inputs rounded)")
      ->check(CLI::IsMember({"fp32", "tf32", "bf16"}))
      ->capture_default_str();
  app.add_flag("--no-cuda-graphs", s.no_cuda_graphs, "On CUDA, launch every decode step's kernels one by one");
}

gpt2::ForwardLimits execution_limits(const ModelSource& s) {
  gpt2::ForwardLimits limits;
  const auto math = gemm_math_from_name(s.gemm_math);
  if (!math) throw UsageError("--gemm-math: expected fp32, tf32 or bf16, got '" + s.gemm_math + "'");
  if (*math != GemmMath::kFp32 && parse_device(s.device) != Device::kCuda)
    throw UsageError("--gemm-math " + s.gemm_math + " needs --device cuda (the CPU computes in fp32)");
  limits.gemm_math = *math;
  limits.cuda_graphs = !s.no_cuda_graphs;
  return limits;
}

Device parse_device(const std::string& name) {
  auto d = device_from_name(name);
  if (!d) throw UsageError("--device: expected cpu or cuda, got '" + name + "'");
  return *d;
}

LoadedModel load_model(const ModelSource& s, bool quiet) {
  const auto start = std::chrono::steady_clock::now();
  const Device device = parse_device(s.device);
  LoadedModel out{nullptr, Tokenizer::gpt2(), "", false, 0};
  if (!s.model_dir.empty()) {
    ProgressBar bar("loading", !quiet);
    out.model = gpt2::Model::load(s.model_dir, device, [&](size_t d, size_t t) { bar.update(d, t); });
    out.tokenizer = Tokenizer::for_model_directory(s.model_dir);
    out.description = s.model_dir;
  } else {
    const std::string preset = s.preset.empty() ? "gpt2" : s.preset;
    const gpt2::Config config = gpt2::preset(preset);
    ProgressBar bar("initializing", !quiet);
    gpt2::InitOptions init;
    init.seed = parse_u64_flag("--init-seed", s.init_seed);
    init.device = device;
    init.progress = [&](size_t d, size_t t) { bar.update(d, t); };
    out.model = gpt2::Model::from_parameters(config, gpt2::initialize(config, init), device);
    out.description = preset + " initialized from seed " + std::to_string(init.seed);
    out.random_weights = true;
    if (!quiet)
      std::fprintf(stderr,
                   "eagerlm: no -m given: using %s (random weights: the text is meaningless).\n"
                   "eagerlm: for real text, point -m at a Hugging Face GPT-2 directory "
                   "(config.json + model.safetensors).\n",
                   out.description.c_str());
  }
  out.load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace eagerlm::cli
