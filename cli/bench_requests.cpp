#include "cli/bench_requests.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>

#include "cli/cli_common.h"
#include "cli/command.h"
#include "cli/model_flops.h"
#include "engine/core/backend.h"
#include "engine/generation/async_engine.h"
#include "kernels/cpu/cpu_ops.h"
#include "models/gpt2/gpt2_step_model.h"

namespace eagerlm::cli {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct Planned {
  double arrival_s;
  std::vector<int32_t> prompt;
  int32_t budget;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}

// The schedule: prompt lengths and budgets uniform in their ranges, arrivals a Poisson process
// over `spread` seconds. Prompt tokens are drawn from the vocabulary's ordinary ids.
std::vector<Planned> plan(const RequestBenchOptions& o, int64_t vocab, int64_t max_len, double spread) {
  std::mt19937_64 rng(o.seed);
  std::vector<Planned> out(size_t(o.requests));
  double t = 0;
  std::exponential_distribution<double> gap(double(o.requests) / std::max(spread, 1e-3));
  for (auto& p : out) {
    p.arrival_s = t;
    t += gap(rng);
    const int len = std::uniform_int_distribution<int>(o.min_prompt, o.max_prompt)(rng);
    p.budget = std::uniform_int_distribution<int>(o.min_budget, o.max_budget)(rng);
    const int64_t fit = std::min<int64_t>(len, max_len - p.budget);  // prompt + budget within the context
    for (int64_t i = 0; i < std::max<int64_t>(fit, 1); ++i)
      p.prompt.push_back(int32_t(rng() % uint64_t(std::min<int64_t>(vocab, 50000))));
  }
  return out;
}

struct Run {
  double wall_s = 0;
  int64_t generated = 0;
  std::vector<double> ttft_ms, itl_ms, excess_steps;
  std::vector<double> gap_ms;  // every wait between two tokens of one stream: a prompt chunk is one
  int64_t prefill_chunk = 0;   // the chunk the scheduler used
  SchedulerStats stats;        // its steps by kind, with the model's time on them
};

json step_kind_json(const StepKindStats& k) {
  return {{"steps", k.steps}, {"rows", k.rows}, {"seconds", k.model_ms / 1e3}};
}

// "710 decode-only (8.0 rows, 23.3 ms)": a kind of step, with its mean rows and model time.
std::string describe(const char* what, const StepKindStats& k) {
  char text[128];
  const double n = double(std::max<int64_t>(k.steps, 1));
  std::snprintf(text, sizeof text, "%lld %s (%.1f rows, %.1f ms)", (long long)k.steps, what, double(k.rows) / n,
                k.model_ms / n);
  return text;
}

// One pass of the schedule with `slots` cache slots.
Run run_schedule(const std::shared_ptr<const gpt2::Model>& model, const Tokenizer& tok, const gpt2::ForwardLimits& exec,
                 const std::vector<Planned>& schedule, int slots, int64_t prefill_chunk) {
  gpt2::ForwardLimits lim = exec;
  lim.max_slots = slots;
  gpt2::Gpt2StepModel step(model, lim);
  SchedulerOptions options;
  options.prefill_chunk = prefill_chunk;
  AsyncEngine engine(step, tok, options);
  std::mutex mutex;
  std::condition_variable all_done;
  size_t finished = 0;
  std::vector<GenerationResult> results(schedule.size());
  // When each request's tokens arrived: written only by its own callbacks (on the engine's
  // thread), read once every request is done.
  std::vector<std::vector<Clock::time_point>> arrivals(schedule.size());
  const auto start = Clock::now();
  for (size_t i = 0; i < schedule.size(); ++i) {
    std::this_thread::sleep_until(
        start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(schedule[i].arrival_s)));
    Request r;
    r.prompt = schedule[i].prompt;
    r.options.max_new_tokens = schedule[i].budget;
    r.options.ignore_eos = true;  // every request uses its whole budget
    r.options.sampling.seed = 0;
    r.on_token = [&arrivals, i](const StreamEvent& e) {
      if (e.token >= 0) arrivals[i].push_back(Clock::now());
      return true;
    };
    r.on_done = [&, i](RequestOutcome&& out) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!out.results.empty()) results[i] = std::move(out.results[0]);
      ++finished;
      all_done.notify_all();
    };
    engine.submit(std::move(r));
  }
  {
    std::unique_lock<std::mutex> lock(mutex);
    all_done.wait(lock, [&] { return finished == schedule.size(); });
  }
  Run run;
  run.prefill_chunk = engine.options().prefill_chunk;
  run.stats = engine.stats();
  run.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> step_ms;
  for (const auto& g : results) {
    run.generated += int64_t(g.ids.size());
    run.ttft_ms.push_back(g.timings.first_token_ms);
    if (g.ids.size() > 1) run.itl_ms.push_back(g.timings.decode_ms_per_token);
  }
  for (const auto& times : arrivals)
    for (size_t k = 1; k < times.size(); ++k)
      run.gap_ms.push_back(std::chrono::duration<double, std::milli>(times[k] - times[k - 1]).count());
  // A decode step of this run: the median inter-token time. A request that found a free slot
  // (queued under one step) should see its first token within its own prefill plus two steps.
  const double step_time = percentile(run.itl_ms, 0.5);
  for (const auto& g : results)
    if (g.timings.queued_ms < step_time && step_time > 0)
      run.excess_steps.push_back((g.timings.first_token_ms - g.timings.queued_ms - g.timings.prefill_ms) / step_time);
  return run;
}

}  // namespace

int run_request_bench(const ModelFlags& source, const RequestBenchOptions& o, int threads, bool as_json) {
  auto say = [&](const char* fmt, auto... args) {
    if (!as_json) std::fprintf(stderr, fmt, args...);
  };
  if (o.requests < 1) throw UsageError("--requests: expected at least 1, got " + std::to_string(o.requests));
  for (int p : o.parallel)
    if (p < 1) throw UsageError("--parallel: expected slot counts >= 1, got " + std::to_string(p));
  // NaN fails both comparisons; a day bounds the sleeps the schedule can ask for.
  if (o.arrival_seconds != -1 && !(o.arrival_seconds >= 0 && o.arrival_seconds <= 86400))
    throw UsageError("--arrival-seconds: expected 0 to 86400 seconds, got " + std::to_string(o.arrival_seconds));
  const gpt2::ForwardLimits exec = execution_limits(source);
  const Device device = parse_device(source.device);
  const DeviceLimits limits = backend_for(device).measure_limits(threads);
  gpt2::LoadedModel lm = load_model(source, as_json);
  const auto& c = lm.model->config();
  if (o.max_prompt + o.max_budget > c.n_positions)
    say("eagerlm bench: prompts are cut so that prompt + budget fits the context of %lld\n", (long long)c.n_positions);

  // Spread the arrivals over a sixteenth of what one slot would need to decode them (the
  // estimate below leaves out prefill, so one slot needs more). The spread caps any run's
  // throughput at the schedule's tokens over the spread, 16x one slot's decode rate here, so no
  // default slot count is bounded by when requests arrive rather than by the engine (with a
  // quarter, 8 slots could never reach 4x one slot); requests still arrive while the multi-slot
  // runs are under way. --arrival-seconds sets a lighter load.
  double spread = o.arrival_seconds;
  if (spread < 0) {
    gpt2::ForwardLimits lim = exec;
    lim.max_len = 64;
    gpt2::ForwardPass probe(lm.model, lim);
    std::vector<int32_t> t(32, 1);
    probe.step({{0, 0, t.data(), 32}}, gpt2::LogitsFor::kLastToken);
    const auto t0 = Clock::now();
    for (int32_t i = 0; i < 4; ++i) probe.step({{0, 32 + i, t.data(), 1}}, gpt2::LogitsFor::kLastToken);
    probe.context().synchronize();
    const double token_s = std::chrono::duration<double>(Clock::now() - t0).count() / 4;
    spread = token_s * double(o.requests) * double(o.min_budget + o.max_budget) / 2 / 16;
  }
  const auto schedule = plan(o, c.vocab_size, c.n_positions, spread);
  int64_t prompt_tokens = 0, budget = 0;
  double flops = 0;  // the schedule's arithmetic, the same at any slot count
  for (const auto& p : schedule) {
    prompt_tokens += int64_t(p.prompt.size()), budget += p.budget;
    const int64_t T = int64_t(p.prompt.size());
    flops += prefill_flops(c, double(T));  // which also gives the first token
    // Token k (from 1) is fed at position T + k - 1; a sequence ends at the context's end.
    const int64_t generated = std::min<int64_t>(p.budget, c.n_positions - T);
    for (int64_t k = 1; k < generated; ++k) flops += decode_flops(c, double(T + k - 1));
  }
  // The shortest time that arithmetic can take at the peak of the math the products use: no
  // slot count beats it, so one slot's time over it bounds any run's speedup over one slot.
  const GemmMath math = lm.model->gemm_math();
  const double peak = limits.peak_for(math);
  const double compute_floor_s = peak > 0 ? flops / (peak * 1e9) : 0;
  say("eagerlm bench: %d requests (%lld prompt tokens, %lld to generate) arriving over %.1f s; CPU kernels %s\n",
      o.requests, (long long)prompt_tokens, (long long)budget, spread, cpu::active_isa());
  say("  their arithmetic: %.0f GFLOP, at least %.1f s at the %s peak (%.0f GFLOP/s)\n", flops / 1e9, compute_floor_s,
      gemm_math_name(math), peak);

  json out = {{"machine",
               {{"device", device_name(device)},
                {"name", limits.name},
                {"isa", cpu::active_isa()},
                {"threads", threads},
                {"read_gbps", limits.read_gbps},
                {"read_gbps_median", limits.read_gbps_median},
                {"fp32_peak_gflops", limits.peak_gflops}}},
              {"gemm_math", gemm_math_name(math)},
              {"peak_gflops", peak},
              {"gflop", flops / 1e9},
              {"compute_floor_s", compute_floor_s},
              {"model", lm.description},
              {"requests", o.requests},
              {"prompt_tokens", prompt_tokens},
              {"budget_tokens", budget},
              {"arrival_seconds", spread},
              {"runs", json::array()}};
  double one_slot = 0;
  for (int slots : o.parallel) {
    const Run r = run_schedule(lm.model, lm.tokenizer, exec, schedule, slots, o.prefill_chunk);
    const double throughput = double(r.generated) / r.wall_s;
    if (slots == 1) one_slot = throughput;
    json run = {{"parallel", slots},
                {"prefill_chunk", r.prefill_chunk},
                {"wall_s", r.wall_s},
                {"generated_tokens", r.generated},
                {"tokens_per_second", throughput},
                {"ttft_ms_p50", percentile(r.ttft_ms, 0.5)},
                {"ttft_ms_p99", percentile(r.ttft_ms, 0.99)},
                {"itl_ms_p50", percentile(r.itl_ms, 0.5)},
                {"itl_ms_p99", percentile(r.itl_ms, 0.99)},
                {"token_gap_ms_p99", percentile(r.gap_ms, 0.99)},
                {"token_gap_ms_max", percentile(r.gap_ms, 1.0)},
                {"first_token_beyond_prefill_steps_p50", percentile(r.excess_steps, 0.5)},
                {"first_token_beyond_prefill_steps_max", percentile(r.excess_steps, 1.0)},
                {"requests_admitted_at_once", r.excess_steps.size()},
                {"cached_prompt_tokens", r.stats.cached_tokens},
                {"steps",
                 {{"decode", step_kind_json(r.stats.decode_only)},
                  {"mixed", step_kind_json(r.stats.mixed)},
                  {"prompt", step_kind_json(r.stats.prompt_only)}}}};
    if (compute_floor_s > 0) run["percent_of_peak"] = 100 * compute_floor_s / r.wall_s;
    if (one_slot > 0) run["speedup_over_1"] = throughput / one_slot;
    if (slots == 1 && compute_floor_s > 0) {
      out["speedup_bound"] = r.wall_s / compute_floor_s;
      say("  one slot's %.1f s over the arithmetic's %.1f s: no slot count can run this schedule more than %.2fx as "
          "fast\n",
          r.wall_s, compute_floor_s, r.wall_s / compute_floor_s);
    }
    out["runs"].push_back(run);
    say("parallel %2d: %.1f tokens/s (%.1f s)%s | first token p50 %.0f ms, p99 %.0f ms | inter-token p50 %.1f ms, "
        "p99 %.1f ms, longest wait %.0f ms | admitted at once: first token %.2f steps beyond its prefill (p50), %.2f (max)\n",
        slots, throughput, r.wall_s,
        one_slot > 0 && slots != 1 ? (" = " + std::to_string(throughput / one_slot).substr(0, 4) + "x 1 slot").c_str()
                                   : "",
        percentile(r.ttft_ms, 0.5), percentile(r.ttft_ms, 0.99), percentile(r.itl_ms, 0.5), percentile(r.itl_ms, 0.99),
        percentile(r.gap_ms, 1.0), percentile(r.excess_steps, 0.5), percentile(r.excess_steps, 1.0));
    const auto& st = r.stats;
    say("  its steps: %s, %s, %s; %.1f s outside the model (sampling, scheduling, waiting for requests)\n",
        describe("decode-only", st.decode_only).c_str(), describe("mixed", st.mixed).c_str(),
        describe("prompt-only", st.prompt_only).c_str(),
        r.wall_s - (st.decode_only.model_ms + st.mixed.model_ms + st.prompt_only.model_ms) / 1e3);
  }
  if (as_json) std::cout << out.dump(2) << "\n";
  return 0;
}

}  // namespace eagerlm::cli
