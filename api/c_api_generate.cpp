// The C API's generation calls: options set by name from text, generators, generate, results.
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "api/c_api_support.h"
#include "api/library_internal.h"
#include "api/option_table.h"

using eagerlm::capi::copy_out;
using eagerlm::capi::copy_text_out;
using eagerlm::capi::fail;
using eagerlm::capi::guarded;
using eagerlm::capi::require;

namespace {

const eagerlm_result* checked_result(const char* function, const eagerlm_result* result, size_t index) {
  require(result, function, "result");
  if (index >= result->results.size())
    fail(EAGERLM_ERROR_INVALID_ARGUMENT, std::string(function) + ": index " + std::to_string(index) +
                                             " is out of range (the result holds " +
                                             std::to_string(result->results.size()) + " outputs)");
  return result;
}

eagerlm::OnToken wrap_callback(eagerlm_token_callback callback, void* user_data) {
  if (!callback) return {};
  // One buffer reused for every token: the text must be NUL-terminated for C.
  return [callback, user_data, text = std::string()](const eagerlm::TokenEvent& e) mutable {
    text.assign(e.text);
    return callback(e.index, e.token, text.c_str(), text.size(), user_data) != 0;
  };
}

const eagerlm::GenerateOptions& options_or_default(const eagerlm_options* options) {
  static const eagerlm::GenerateOptions defaults;
  return options ? options->options : defaults;
}

}  // namespace

extern "C" {

eagerlm_status eagerlm_options_create(eagerlm_options** options) {
  return guarded([&] {
    require(options, "eagerlm_options_create", "options");
    *options = nullptr;
    *options = new eagerlm_options{};
  });
}

void eagerlm_options_free(eagerlm_options* options) { delete options; }

eagerlm_status eagerlm_options_set(eagerlm_options* options, const char* name, const char* value) {
  return guarded([&] {
    require(options, "eagerlm_options_set", "options");
    require(name, "eagerlm_options_set", "name");
    require(value, "eagerlm_options_set", "value");
    eagerlm::GenerateOptions updated = options->options;
    try {
      eagerlm::library::set_option(updated, name, value);
      eagerlm::library::to_generation_options(updated, 0);  // range checks, naming the option
    } catch (const eagerlm::Error& e) {
      fail(EAGERLM_ERROR_INVALID_ARGUMENT, std::string("eagerlm_options_set: ") + e.what());
    }
    options->options = std::move(updated);  // unchanged on failure
  });
}

eagerlm_status eagerlm_generator_create(const eagerlm_model* model, size_t max_batch, size_t max_length,
                                        eagerlm_generator** generator) {
  return guarded([&] {
    require(generator, "eagerlm_generator_create", "generator");
    *generator = nullptr;
    require(model, "eagerlm_generator_create", "model");
    *generator = new eagerlm_generator{eagerlm::Generator(model->model, max_batch, max_length)};
  });
}

void eagerlm_generator_free(eagerlm_generator* generator) { delete generator; }

eagerlm_status eagerlm_generate(eagerlm_generator* generator, const char* const* prompts, const size_t* prompt_sizes,
                                size_t n_prompts, const eagerlm_options* options, eagerlm_token_callback callback,
                                void* user_data, eagerlm_result** result) {
  return guarded([&] {
    const char* fn = "eagerlm_generate";
    require(result, fn, "result");
    *result = nullptr;
    require(generator, fn, "generator");
    if (n_prompts > 0) require(prompts, fn, "prompts");
    std::vector<std::string> texts;
    for (size_t i = 0; i < n_prompts; ++i) {
      if (!prompts[i])
        fail(EAGERLM_ERROR_INVALID_ARGUMENT, std::string(fn) + ": prompt " + std::to_string(i) + " is NULL");
      texts.emplace_back(prompts[i], prompt_sizes ? prompt_sizes[i] : std::char_traits<char>::length(prompts[i]));
    }
    auto out =
        generator->generator.generate_batch(texts, options_or_default(options), wrap_callback(callback, user_data));
    *result = new eagerlm_result{std::move(out)};
  });
}

eagerlm_status eagerlm_generate_tokens(eagerlm_generator* generator, const int32_t* ids, const size_t* lengths,
                                       size_t n_prompts, const eagerlm_options* options,
                                       eagerlm_token_callback callback, void* user_data, eagerlm_result** result) {
  return guarded([&] {
    const char* fn = "eagerlm_generate_tokens";
    require(result, fn, "result");
    *result = nullptr;
    require(generator, fn, "generator");
    const auto prompts = eagerlm::capi::split_sequences(fn, ids, lengths, n_prompts);
    auto out =
        generator->generator.generate_tokens(prompts, options_or_default(options), wrap_callback(callback, user_data));
    *result = new eagerlm_result{std::move(out)};
  });
}

size_t eagerlm_result_count(const eagerlm_result* result) { return result ? result->results.size() : 0; }

eagerlm_status eagerlm_result_text(const eagerlm_result* result, size_t index, char* text, size_t capacity,
                                   size_t* size) {
  return guarded([&] {
    const auto* r = checked_result("eagerlm_result_text", result, index);
    copy_text_out("eagerlm_result_text", r->results[index].text, text, capacity, size);
  });
}

eagerlm_status eagerlm_result_ids(const eagerlm_result* result, size_t index, int32_t* ids, size_t capacity,
                                  size_t* count) {
  return guarded([&] {
    const auto& v = checked_result("eagerlm_result_ids", result, index)->results[index].ids;
    copy_out("eagerlm_result_ids", v.data(), v.size(), ids, capacity, count);
  });
}

eagerlm_status eagerlm_result_finish_reason(const eagerlm_result* result, size_t index, eagerlm_finish_reason* reason) {
  return guarded([&] {
    const auto& r = checked_result("eagerlm_result_finish_reason", result, index)->results[index];
    require(reason, "eagerlm_result_finish_reason", "reason");
    switch (r.finish_reason) {
      case eagerlm::FinishReason::kEos: *reason = EAGERLM_FINISH_EOS; break;
      case eagerlm::FinishReason::kStop: *reason = EAGERLM_FINISH_STOP; break;
      case eagerlm::FinishReason::kLength: *reason = EAGERLM_FINISH_LENGTH; break;
      case eagerlm::FinishReason::kCallback: *reason = EAGERLM_FINISH_CALLBACK; break;
      case eagerlm::FinishReason::kCancelled: *reason = EAGERLM_FINISH_CANCELLED; break;
    }
  });
}

eagerlm_status eagerlm_result_logprobs(const eagerlm_result* result, size_t index, float* logprobs, size_t capacity,
                                       size_t* count) {
  return guarded([&] {
    const auto& v = checked_result("eagerlm_result_logprobs", result, index)->results[index].logprobs;
    copy_out("eagerlm_result_logprobs", v.data(), v.size(), logprobs, capacity, count);
  });
}

eagerlm_status eagerlm_result_top_logprobs(const eagerlm_result* result, size_t index, size_t position, int32_t* ids,
                                           float* logprobs, size_t capacity, size_t* count) {
  return guarded([&] {
    const char* fn = "eagerlm_result_top_logprobs";
    const auto& top = checked_result(fn, result, index)->results[index].top_logprobs;
    require(count, fn, "count");
    if (position >= top.size())
      fail(EAGERLM_ERROR_INVALID_ARGUMENT, std::string(fn) + ": position " + std::to_string(position) +
                                               " is out of range (output " + std::to_string(index) + " has " +
                                               std::to_string(top.size()) +
                                               " positions with alternatives; set the top_logprobs option)");
    const auto& at = top[position];
    *count = at.size();
    if (!ids && !logprobs) return;
    if (capacity < at.size())
      fail(EAGERLM_ERROR_BUFFER_TOO_SMALL, std::string(fn) + ": the buffers hold " + std::to_string(capacity) +
                                               " entries; " + std::to_string(at.size()) + " are needed");
    for (size_t i = 0; i < at.size(); ++i) {
      if (ids) ids[i] = at[i].id;
      if (logprobs) logprobs[i] = at[i].logprob;
    }
  });
}

eagerlm_status eagerlm_result_info_get(const eagerlm_result* result, size_t index, eagerlm_result_info* info) {
  return guarded([&] {
    const auto& r = checked_result("eagerlm_result_info_get", result, index)->results[index];
    require(info, "eagerlm_result_info_get", "info");
    const eagerlm::Timings& t = r.timings;
    *info = eagerlm_result_info{r.index,          r.sample,       r.seed,
                                r.score,          t.queued_ms,    t.prefill_ms,
                                t.first_token_ms, t.decode_ms_per_token, t.total_ms,
                                t.prompt_tokens,  t.cached_prompt_tokens, t.generated_tokens};
  });
}

void eagerlm_result_free(eagerlm_result* result) { delete result; }

}  // extern "C"
