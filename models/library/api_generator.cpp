// eagerlm::Generator: a Gpt2StepModel (forward pass and KV cache, allocated once) driven by the
// engine's GenerationLoop, with the public options and results translated at the boundary.
#include <atomic>
#include <limits>
#include <string>
#include <vector>

#include "eagerlm/generator.hpp"
#include "models/gpt2/gpt2_step_model.h"
#include "models/library/library_internal.h"

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
  g.sampling.temperature = o.temperature;
  g.sampling.top_k = to_int32(o.top_k, "top_k");
  g.sampling.top_p = o.top_p;
  g.sampling.min_p = o.min_p;
  g.sampling.repetition_penalty = o.repetition_penalty;
  g.sampling.seed = o.seed;
  g.stop = o.stop;
  g.ignore_eos = o.ignore_eos;
  g.logprobs = o.logprobs;
  g.eos_id = eos_id;
  g.validate();
  return g;
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
                                                   " exceeds the model's context length " + std::to_string(c.n_positions));
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
  std::vector<std::vector<int32_t>> ids = library::translate_errors([&] {
    std::vector<std::vector<int32_t>> out;
    for (size_t i = 0; i < prompts.size(); ++i) {
      try {
        out.push_back(m.tokenizer.encode(prompts[i]));
      } catch (const Error& e) {
        throw Error(e.code(), "prompt " + std::to_string(i) + ": " + e.what());
      }
      // An empty prompt starts from end-of-text, as GPT-2's unconditional samples do.
      if (out.back().empty()) out.back().push_back(int32_t(m.model->config().eos_token_id));
    }
    return out;
  });
  return generate_tokens(ids, options, on_token);
}

std::vector<Result> Generator::generate_tokens(const std::vector<std::vector<int32_t>>& prompts,
                                               const GenerateOptions& options, const OnToken& on_token) {
  if (!impl_) moved_from();
  return library::translate_errors([&] {
    BusyGuard busy(impl_->busy);
    const Model::Impl& m = *impl_->model.impl_;
    const GenerationOptions engine_options =
        library::to_generation_options(options, int32_t(m.model->config().eos_token_id));
    library::apply_cpu_threads();
    TokenCallback callback;
    if (on_token)
      callback = [&on_token](size_t index, int32_t token, const std::string& text) {
        try {
          return on_token(TokenEvent{index, token, text});
        } catch (...) {
          throw library::CallbackException{std::current_exception()};
        }
      };
    GenerationLoop loop(impl_->step, m.tokenizer);
    std::vector<GenerationResult> results = loop.generate(prompts, engine_options, callback);
    std::vector<Result> out(results.size());
    for (size_t i = 0; i < results.size(); ++i) {
      out[i].text = std::move(results[i].text);
      out[i].ids = std::move(results[i].ids);
      out[i].finish_reason = results[i].finish_reason;
      out[i].logprobs = std::move(results[i].logprobs);
    }
    return out;
  });
}

}  // namespace eagerlm
