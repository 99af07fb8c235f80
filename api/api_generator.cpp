// eagerlm::Generator: a Gpt2StepModel (forward pass and KV cache, allocated once) driven by the
// engine's GenerationLoop, with the public options and results translated at the boundary.
#include <atomic>
#include <limits>
#include <string>
#include <vector>

#include "api/library_internal.h"
#include "eagerlm/generator.hpp"
#include "engine/generation/prompts.h"
#include "models/gpt2/gpt2_step_model.h"

namespace eagerlm {

namespace library {

namespace {

int32_t to_int32(size_t value, const char* name) {
  if (value > size_t(std::numeric_limits<int32_t>::max()))
    throw Error(ErrorCode::kInvalidArgument, std::string(name) + " must be at most " +
                                                 std::to_string(std::numeric_limits<int32_t>::max()) + ", got " +
                                                 std::to_string(value));
  return int32_t(value);
}

}  // namespace

GenerationOptions to_generation_options(const GenerateOptions& o, int32_t eos_id) {
  GenerationOptions g;
  g.max_new_tokens = to_int32(o.max_new_tokens, "max_new_tokens");
  g.min_new_tokens = to_int32(o.min_new_tokens, "min_new_tokens");
  g.sampling.temperature = o.temperature;
  g.sampling.top_k = to_int32(o.top_k, "top_k");
  g.sampling.top_p = o.top_p;
  g.sampling.min_p = o.min_p;
  g.sampling.repetition_penalty = o.repetition_penalty;
  g.sampling.presence_penalty = o.presence_penalty;
  g.sampling.frequency_penalty = o.frequency_penalty;
  g.sampling.logit_bias = o.logit_bias;
  g.sampling.no_repeat_ngram_size = to_int32(o.no_repeat_ngram_size, "no_repeat_ngram_size");
  g.sampling.seed = o.seed;
  g.stop = o.stop;
  g.stop_token_ids = o.stop_token_ids;
  g.ignore_eos = o.ignore_eos;
  g.logprobs = o.logprobs;
  g.top_logprobs = to_int32(o.top_logprobs, "top_logprobs");
  g.n = to_int32(o.n, "n");
  g.beams.num_beams = to_int32(o.num_beams, "num_beams");
  g.beams.length_penalty = o.length_penalty;
  g.beams.early_stopping = o.early_stopping;
  g.beams.num_return_sequences = to_int32(o.num_return_sequences, "num_return_sequences");
  g.eos_id = eos_id;
  g.validate();
  return g;
}

Result to_result(GenerationResult&& g, size_t index) {
  Result r;
  r.text = std::move(g.text);
  r.ids = std::move(g.ids);
  r.finish_reason = g.finish_reason;
  r.logprobs = std::move(g.logprobs);
  r.top_logprobs = std::move(g.top_logprobs);
  r.score = g.score;
  r.seed = g.seed;
  r.index = index;
  r.sample = size_t(g.sample);
  const RequestTimings& t = g.timings;
  r.timings = {t.queued_ms,
               t.prefill_ms,
               t.first_token_ms,
               t.decode_ms_per_token,
               t.total_ms,
               size_t(t.prompt_tokens),
               size_t(t.cached_prompt_tokens),
               size_t(t.generated_tokens)};
  return r;
}

TokenEvent to_token_event(size_t index, const StreamEvent& e) {
  TokenEvent t;
  t.index = index;
  t.sample = size_t(e.sample);
  t.token = e.token;
  t.text = e.text;
  t.logprob = e.logprob;
  t.top = e.top;
  return t;
}

}  // namespace library

struct Generator::Impl {
  Impl(const Model& m, const gpt2::ForwardLimits& limits) : model(m), step(m.impl_->model, limits) {}
  Model model;  // keeps the weights and tokenizer alive
  gpt2::Gpt2StepModel step;
  std::atomic<bool> busy{false};
};

namespace {

// Marks the generator busy for one call; a second call meanwhile is refused, not queued (it
// would corrupt the cache, or deadlock when made from the callback).
class BusyGuard {
 public:
  explicit BusyGuard(std::atomic<bool>& busy) : busy_(busy) {
    if (busy_.exchange(true))
      throw Error(ErrorCode::kInvalidArgument,
                  "generator is already running a call (use one Generator per thread; "
                  "do not call it from its own callback)");
  }
  ~BusyGuard() { busy_.store(false); }
  BusyGuard(const BusyGuard&) = delete;
  BusyGuard& operator=(const BusyGuard&) = delete;

 private:
  std::atomic<bool>& busy_;
};

[[noreturn]] void moved_from() {
  throw Error(ErrorCode::kInvalidArgument, "this Generator was moved from and has no cache");
}

}  // namespace

Generator::Generator(const Model& model, size_t max_batch, size_t max_length) {
  impl_ = library::translate_errors([&] {
    const gpt2::Config& c = model.impl_->model->config();
    if (max_batch < 1) throw Error(ErrorCode::kInvalidArgument, "max_batch must be at least 1");
    if (max_batch > size_t(std::numeric_limits<int32_t>::max()))
      throw Error(ErrorCode::kInvalidArgument, "max_batch " + std::to_string(max_batch) + " is too large");
    if (max_length > size_t(c.n_positions))
      throw Error(ErrorCode::kInvalidArgument, "max_length " + std::to_string(max_length) +
                                                   " exceeds the model's context length " +
                                                   std::to_string(c.n_positions));
    gpt2::ForwardLimits limits;
    limits.max_slots = int64_t(max_batch);
    limits.max_len = max_length == 0 ? c.n_positions : int64_t(max_length);
    return std::make_unique<Impl>(model, limits);
  });
}

Generator::~Generator() = default;
Generator::Generator(Generator&&) noexcept = default;
Generator& Generator::operator=(Generator&&) noexcept = default;

size_t Generator::max_batch() const {
  if (!impl_) moved_from();
  return size_t(impl_->step.max_slots());
}

size_t Generator::max_length() const {
  if (!impl_) moved_from();
  return size_t(impl_->step.max_len());
}

const Model& Generator::model() const {
  if (!impl_) moved_from();
  return impl_->model;
}

Result Generator::generate(std::string_view prompt, const GenerateOptions& options, const OnToken& on_token) {
  return std::move(generate_batch({std::string(prompt)}, options, on_token)[0]);
}

std::vector<Result> Generator::generate_batch(const std::vector<std::string>& prompts, const GenerateOptions& options,
                                              const OnToken& on_token) {
  if (!impl_) moved_from();
  const Model::Impl& m = *impl_->model.impl_;
  const std::vector<std::vector<int32_t>> ids = library::translate_errors(
      [&] { return encode_prompts(m.tokenizer, prompts, EncodeOptions{}, int32_t(m.model->config().eos_token_id)); });
  return generate_tokens(ids, options, on_token);
}

std::vector<Result> Generator::generate_tokens(const std::vector<std::vector<int32_t>>& prompts,
                                               const GenerateOptions& options, const OnToken& on_token) {
  if (!impl_) moved_from();
  return library::translate_errors([&] {
    BusyGuard busy(impl_->busy);
    const Model::Impl& m = *impl_->model.impl_;
    GenerationOptions engine_options = library::to_generation_options(options, int32_t(m.model->config().eos_token_id));
    engine_options.sampling.vocab_limit = gpt2::sampling_vocab(m.model->config(), m.tokenizer);
    library::apply_cpu_threads();
    TokenCallback callback;
    if (on_token)
      callback = [&on_token](size_t index, const StreamEvent& e) {
        try {
          return on_token(library::to_token_event(index, e));
        } catch (...) {
          throw library::CallbackException{std::current_exception()};
        }
      };
    GenerationLoop loop(impl_->step, m.tokenizer);
    std::vector<GenerationResult> results = loop.generate(prompts, engine_options, callback);
    const size_t per_prompt = size_t(engine_options.result_count());
    std::vector<Result> out;
    out.reserve(results.size());
    for (size_t i = 0; i < results.size(); ++i) out.push_back(library::to_result(std::move(results[i]), i / per_prompt));
    return out;
  });
}

}  // namespace eagerlm
