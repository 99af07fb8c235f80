// `eagerlm bench`: the engine's speed on this machine, measured beside the limits of the device
// it runs on (the CPU's, or with --device cuda the GPU's own), in the same run — first-token
// latency (cold and warm), prefill throughput against the GEMM peak, decode latency by batch size
// and by position against the memory-bandwidth floor. Numbers are medians; --json prints one
// object for tools and docs/benchmarks.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/bench_requests.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/model_flops.h"
#include "cli/model_source.h"
#include "engine/core/backend.h"
#include "engine/core/cpu_backend.h"
#include "engine/core/threads.h"
#include "engine/generation/step_packer.h"
#include "kernels/cpu/cpu_ops.h"
#include "models/gpt2/forward.h"

namespace eagerlm::cli {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct BenchOptions {
  ModelFlags source;
  int threads = 0;
  int decode_steps = 16;
  bool json = false;
  bool quick = false;  // fewer, shorter measurements (CI smoke runs)
  RequestBenchOptions requests;
  bool request_bench = false;  // --requests given: the continuous-batching benchmark instead
};

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::vector<int32_t> tokens(size_t n, int64_t vocab) {
  std::vector<int32_t> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = int32_t((i * 7919 + 13) % size_t(vocab));
  return t;
}

// Bytes a batch-1 decode step must read: every weight once as the model holds it (the matrices in
// its weight type, int8 scales included; the rest float32), except wpe (one row).
double decode_weight_bytes(const gpt2::Model& model) {
  const auto& c = model.config();
  const auto& p = model.parameters();
  int64_t float_elements = 0;  // the parameters that are no weight matrix, always float32
  for (size_t i = 0; i < p.specs.size(); ++i)
    if (!p.specs[i].matrix) float_elements += p.specs[i].shape.numel();
  return double(model.matrix_bytes()) + double(float_elements - c.n_positions * c.n_embd + c.n_embd) * sizeof(float);
}

// Untimed decode steps before the timed ones: on CUDA the first step at a batch size runs eagerly
// and the second captures its graph, so only later steps show the steady state.
constexpr int kDecodeWarmup = 2;

// Median ms of `steps` decode steps of `batch` sequences, each first prefilled to `position`
// (then kDecodeWarmup untimed steps).
double time_decode(const std::shared_ptr<const gpt2::Model>& model, const gpt2::ForwardLimits& exec, int64_t batch,
                   int64_t position, int steps) {
  const auto& c = model->config();
  gpt2::ForwardLimits lim = exec;
  lim.max_slots = batch;
  lim.max_len = std::min<int64_t>(c.n_positions, position + kDecodeWarmup + steps);
  lim.max_step_rows = std::min<int64_t>(kDefaultStepRows, batch * position);
  gpt2::ForwardPass fwd(model, lim);
  const auto prompt = tokens(size_t(position), c.vocab_size);
  StepPacker packer(lim.max_step_rows);
  for (int64_t s = 0; s < batch; ++s) packer.add(int32_t(s), prompt.data(), int32_t(position));
  while (!packer.done()) fwd.step(packer.next(), gpt2::LogitsFor::kLastToken);
  std::vector<int32_t> next(size_t(batch), 42);
  std::vector<double> ms;
  for (int i = 0; i < kDecodeWarmup + steps; ++i) {
    std::vector<SequenceStep> step;
    for (int64_t s = 0; s < batch; ++s) step.push_back({int32_t(s), int32_t(position + i), &next[size_t(s)], 1});
    const auto t0 = Clock::now();
    fwd.step(step, gpt2::LogitsFor::kLastToken);
    fwd.context().synchronize();
    if (i >= kDecodeWarmup) ms.push_back(ms_since(t0));
  }
  return median(ms);
}

// Everything measured of one loaded model, as JSON fields (model, load_ms, first_token_ms, prefill,
// decode_batch, decode_position, decode_floor): prefill against the peaks measured at the start,
// the batch-1 decode in rounds, each against a bandwidth probed right before it (on a shared host
// the bandwidth available changed twofold between runs minutes apart, docs/benchmarks.md).
template <typename Say>
json measure_model(const BenchOptions& o, const ModelFlags& source, const gpt2::ForwardLimits& exec,
                   const DeviceLimits& limits, Say say) {
  gpt2::LoadedModel lm = load_model(source, o.json);
  const auto& model = lm.model;
  const auto& c = model->config();
  const int steps = o.quick ? 4 : o.decode_steps;
  // Prefill is set against the peak of the GEMM math it runs with.
  const GemmMath math = model->gemm_math();
  const double peak = limits.peak_for(math);
  json out;
  out["model"] = {{"name", lm.description},
                  {"parameters", model->parameter_count()},
                  {"device", device_name(model->device())},
                  {"gemm_math", gemm_math_name(math)},
                  {"weights", weight_type_name(model->weight_type())},
                  {"kv_type", dtype_name(model->kv_type())},
                  {"cuda_graphs", model->device() == Device::kCuda && exec.graphs}};
  out["load_ms"] = lm.load_ms;
  say("model: %s, weights %s (%.1f MB of matrices), KV cache %s\n", lm.description.c_str(),
      weight_type_name(model->weight_type()), double(model->matrix_bytes()) / 1e6, dtype_name(model->kv_type()));
  // First token: the first step a fresh ForwardPass ever runs, then the same step warm.
  {
    const auto prompt = tokens(16, c.vocab_size);
    gpt2::ForwardLimits lim = exec;
    lim.max_len = std::min<int64_t>(c.n_positions, 64);
    std::vector<double> ms;
    for (int i = 0; i < (o.quick ? 2 : 6); ++i) {
      const auto t0 = Clock::now();
      gpt2::ForwardPass fwd(model, lim);
      fwd.step({{0, 0, prompt.data(), 16}}, gpt2::LogitsFor::kLastToken);
      fwd.context().synchronize();
      ms.push_back(ms_since(t0));
    }
    const double cold = ms.front();
    ms.erase(ms.begin());
    out["first_token_ms"] = {{"prompt_tokens", 16}, {"cold", cold}, {"warm", median(ms)}};
    say("first token (16-token prompt): cold %.1f ms, warm %.1f ms\n", cold, median(ms));
  }

  out["prefill"] = json::array();
  for (int64_t T : {int64_t(128), int64_t(512)}) {
    if (T > c.n_positions || (o.quick && T > 128)) continue;
    gpt2::ForwardLimits lim = exec;
    lim.max_len = T;
    lim.max_step_rows = T;
    gpt2::ForwardPass fwd(model, lim);
    const auto prompt = tokens(size_t(T), c.vocab_size);
    std::vector<double> ms;
    for (int i = 0; i < (o.quick ? 1 : 4); ++i) {
      const auto t0 = Clock::now();
      fwd.step({{0, 0, prompt.data(), int32_t(T)}}, gpt2::LogitsFor::kLastToken);
      fwd.context().synchronize();
      ms.push_back(ms_since(t0));
    }
    const double t = median(ms), gflops = prefill_flops(c, double(T)) / (t * 1e6);
    out["prefill"].push_back({{"tokens", T},
                              {"ms", t},
                              {"tokens_per_second", double(T) * 1000 / t},
                              {"gflops", gflops},
                              {"percent_of_peak", 100 * gflops / peak}});
    say("prefill %lld tokens: %.1f ms, %.0f tokens/s, %.1f GFLOP/s = %.0f%% of the %s peak (%.1f)\n", (long long)T, t,
        double(T) * 1000 / t, gflops, 100 * gflops / peak, gemm_math_name(math), peak);
  }

  out["decode_batch"] = json::array();
  for (int64_t b : {int64_t(1), int64_t(8), int64_t(32)}) {
    if (o.quick && b > 8) continue;
    const double ms = time_decode(model, exec, b, 16, steps);
    out["decode_batch"].push_back(
        {{"batch", b}, {"position", 16}, {"ms_per_step", ms}, {"tokens_per_second", double(b) * 1000 / ms}});
    say("decode batch %2lld at position 16: %.2f ms/step, %.1f tokens/s\n", (long long)b, ms, double(b) * 1000 / ms);
  }

  // Batch 1 against its floor, in rounds of a bandwidth probe and then the decode: on a shared host
  // the bandwidth available drifts within seconds (docs/benchmarks.md), so each decode is set
  // against the probe taken just before it, and the ratio reported is the median of the rounds'.
  const double bytes = decode_weight_bytes(*model);
  const int rounds = o.quick ? 1 : 5;
  std::vector<double> round_ms, round_gbps, round_gbps_median, round_ratio, round_ratio_median;
  json round_list = json::array();
  for (int r = 0; r < rounds; ++r) {
    const DeviceLimits near = backend_for(model->device()).measure_read_bandwidth(num_threads());
    const double ms = time_decode(model, exec, 1, 16, steps);
    const double floor_ms = bytes / (near.read_gbps * 1e9) * 1e3;
    round_ms.push_back(ms);
    round_gbps.push_back(near.read_gbps);
    round_gbps_median.push_back(near.read_gbps_median);
    round_ratio.push_back(ms / floor_ms);
    round_ratio_median.push_back(ms / (bytes / (near.read_gbps_median * 1e9) * 1e3));
    round_list.push_back({{"read_gbps", near.read_gbps}, {"floor_ms", floor_ms}, {"ms", ms}, {"ratio", ms / floor_ms}});
  }
  const double decode_b1 = median(round_ms), read_gbps = median(round_gbps);
  const double floor_ms = bytes / (read_gbps * 1e9) * 1e3;
  const double median_floor_ms = bytes / (median(round_gbps_median) * 1e9) * 1e3;
  const auto [low, high] = std::minmax_element(round_ratio.begin(), round_ratio.end());
  out["decode_floor"] = {{"weight_bytes_per_token", bytes},
                         {"read_gbps", read_gbps},
                         {"floor_ms", floor_ms},
                         {"measured_ms", decode_b1},
                         {"ratio", median(round_ratio)},
                         {"read_gbps_median", median(round_gbps_median)},
                         {"median_floor_ms", median_floor_ms},
                         {"ratio_to_median_floor", median(round_ratio_median)},
                         {"rounds", round_list}};
  say("decode floor: %.1f MB of weights / %.1f GB/s (best pass; median %.1f) = %.2f ms (%.2f); measured %.2f ms = "
      "%.2fx the floor (%.2fx the median-pass floor), medians of %d rounds (ratios %.2f-%.2f)\n",
      bytes / 1e6, read_gbps, median(round_gbps_median), floor_ms, median_floor_ms, decode_b1, median(round_ratio),
      median(round_ratio_median), rounds, *low, *high);

  out["decode_position"] = json::array();
  out["decode_position"].push_back({{"position", 16}, {"ms_per_token", decode_b1}});
  say("decode batch 1 at position   16: %.2f ms/token (the rounds above)\n", decode_b1);
  for (int64_t p : {int64_t(512), int64_t(1000)}) {
    if (p + kDecodeWarmup + steps > c.n_positions || o.quick) continue;
    const double ms = time_decode(model, exec, 1, p, steps);
    out["decode_position"].push_back({{"position", p}, {"ms_per_token", ms}});
    say("decode batch 1 at position %4lld: %.2f ms/token\n", (long long)p, ms);
  }
  return out;
}

// --weights all: the four types one after another, then side by side, each with its own floor.
void print_weights_table(const json& runs) {
  // Batch 1 against its floor as the rounds measured it (medians); batch 8 against the batch-1
  // step timed next to it, the same way.
  std::fprintf(stderr, "\n%-6s %12s %10s %9s %12s %9s %14s\n", "weights", "decode b1", "floor", "x floor", "batch 8",
               "b8 / b1", "prefill 128");
  for (const json& r : runs) {
    double b1_step = 0, b8 = 0, prefill = 0;
    for (const json& d : r["decode_batch"]) {
      if (d["batch"] == 1) b1_step = d["ms_per_step"];
      if (d["batch"] == 8) b8 = d["ms_per_step"];
    }
    for (const json& p : r["prefill"])
      if (p["tokens"] == 128) prefill = p["ms"];
    const json& f = r["decode_floor"];
    std::fprintf(stderr, "%-6s %9.2f ms %7.2f ms %8.2fx %9.2f ms %8.2fx %11.1f ms\n",
                 r["model"]["weights"].get<std::string>().c_str(), f["measured_ms"].get<double>(),
                 f["floor_ms"].get<double>(), f["ratio"].get<double>(), b8, b1_step > 0 ? b8 / b1_step : 0.0, prefill);
  }
}

int run_bench(const BenchOptions& o) {
  apply_threads(o.threads);
  const int threads = num_threads();
  const bool all_weights = o.source.weights == "all";
  if (o.request_bench) {
    if (all_weights) throw UsageError("--weights all: only without --requests (give one weight type)");
    return run_request_bench(o.source, o.requests, threads, o.json);
  }
  auto say = [&](const char* fmt, auto... args) {
    if (!o.json) std::fprintf(stderr, fmt, args...);
  };
  const Device device = parse_device(o.source.device);
  const gpt2::ForwardLimits exec = execution_limits(o.source);  // flag errors before any work or output
  say("eagerlm bench: measuring the %s (%d threads, CPU kernels: %s)...\n", device == Device::kCuda ? "GPU" : "machine",
      threads, cpu::active_isa());
  const DeviceLimits limits = backend_for(device).measure_limits(threads);
  json machine = {{"device", device_name(device)},
                  {"read_gbps", limits.read_gbps},
                  {"read_gbps_median", limits.read_gbps_median},
                  {"read_method", limits.read_method},
                  {"fp32_peak_gflops", limits.peak_gflops}};
  json out;
  if (device == Device::kCuda) {
    machine["gpu"] = limits.name;
    machine["tf32_peak_gflops"] = limits.peak_tf32_gflops;
    machine["bf16_peak_gflops"] = limits.peak_bf16_gflops;
    out["host"] = {{"cpu", cpu_model_name()}, {"isa", cpu::active_isa()}, {"threads", threads}};  // not measured
  } else {
    machine["cpu"] = limits.name;
    machine["isa"] = cpu::active_isa();
    machine["threads"] = threads;
    if (limits.peak_bf16_gflops > 0) {  // --gemm-math bf16's products: AMX tiles or AVX512_BF16
      machine["bf16_peak_gflops"] = limits.peak_bf16_gflops;
      machine["bf16_engine"] = cpu::amx_enabled() ? "amx" : "avx512bf16";
    }
  }
  out["machine"] = machine;
  if (!all_weights) {
    out.update(measure_model(o, o.source, exec, limits, say));
  } else {
    out["weights"] = json::array();
    for (const char* type : {"f32", "bf16", "f16", "int8"}) {
      ModelFlags source = o.source;
      source.weights = type;
      say("\n== weights %s\n", type);
      out["weights"].push_back(measure_model(o, source, exec, limits, say));
    }
    if (!o.json) print_weights_table(out["weights"]);
  }
  if (o.json) std::cout << out.dump(2) << "\n";
  return 0;
}

}  // namespace

Subcommand add_bench_command(CLI::App& root) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* app = root.add_subcommand("bench", "Measure first-token latency, prefill and decode speed");
  add_model_options(*app, o->source, {.weights_all = true});
  add_threads_option(*app, o->threads);
  app->add_option("--decode-steps", o->decode_steps, "Decode steps per measurement")
      ->check(CLI::Range(1, 24))
      ->capture_default_str();
  app->add_flag("--quick", o->quick, "Fewer, shorter measurements (smoke test)");
  app->add_option("--requests", o->requests.requests,
                  "Instead: N requests (prompts 16-512 tokens, budgets 16-256) arriving over time, through the "
                  "continuous-batching engine at each --parallel slot count")
      ->each([o](const std::string&) { o->request_bench = true; });
  app->add_option("--parallel", o->requests.parallel, "With --requests: cache slots to compare (e.g. 1,4,8,16)")
      ->delimiter(',')
      ->capture_default_str();
  app->add_option("--arrival-seconds", o->requests.arrival_seconds,
                  "With --requests: spread of the arrivals, 0-86400 s (0: all at once; default: a sixteenth of the "
                  "estimated 1-slot decode)");
  app->add_option("--prefill-chunk", o->requests.prefill_chunk,
                  "With --requests: prompt tokens a step carries beside the decode rows (default: the device's, "
                  "64 on the CPU, 256 on CUDA)")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 20));
  app->add_flag("--json", o->json, "Print one JSON object");
  return {app, [o] { return run_bench(*o); }};
}

}  // namespace eagerlm::cli
