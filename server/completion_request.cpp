#include "server/completion_request.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "server/api_error.h"
#include "server/json_body.h"

namespace eagerlm::server {

namespace {

std::string str(size_t n) { return std::to_string(n); }

int32_t checked_token(const nlohmann::json& v, const std::string& where, size_t vocab) {
  if (!v.is_number_integer() && !v.is_number_unsigned())
    throw invalid_field("prompt", where + " must be a token id (an integer), got " + json_type_name(v));
  if (v.is_number_unsigned() ? v.get<uint64_t>() >= vocab : (v.get<int64_t>() < 0 || uint64_t(v.get<int64_t>()) >= vocab))
    throw invalid_field("prompt", where + " is token id " + v.dump() + ", outside the vocabulary [0, " + str(vocab) + ")");
  return v.get<int32_t>();
}

std::vector<int32_t> token_list(const nlohmann::json& list, const std::string& where, size_t vocab) {
  if (list.empty()) throw invalid_field("prompt", where + " is an empty list of token ids");
  std::vector<int32_t> ids;
  ids.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) ids.push_back(checked_token(list[i], where + "[" + str(i) + "]", vocab));
  return ids;
}

std::vector<int32_t> text_prompt(const std::string& text, const ServedModel& served, const Model& model) {
  std::vector<int32_t> ids;
  try {
    ids = model.tokenize(text);
  } catch (const Error& e) {
    throw invalid_field("prompt", std::string("the prompt cannot be tokenized: ") + e.what());
  }
  // An empty prompt starts from end-of-text, as GPT-2's unconditional samples (and OpenAI) do.
  if (ids.empty()) ids.push_back(served.eos_token_id);
  return ids;
}

// prompt: a string, a list of strings, a list of token ids, or a list of lists of token ids.
void read_prompts(const nlohmann::json* prompt, const ServedModel& served, const Model& model, CompletionRequest& r) {
  if (!prompt) throw invalid_field("prompt", "prompt is required: a string, a list of strings, a list of token ids "
                                             "or a list of lists of token ids");
  const size_t vocab = served.vocab_size;
  if (prompt->is_string()) {
    r.prompt_texts.push_back(prompt->get<std::string>());
    r.prompts.push_back(text_prompt(r.prompt_texts.back(), served, model));
    return;
  }
  if (!prompt->is_array())
    throw invalid_field("prompt", "prompt must be a string or a list (of strings, token ids or lists of token ids), "
                                  "got " + json_type_name(*prompt));
  if (prompt->empty()) throw invalid_field("prompt", "prompt is an empty list");
  const nlohmann::json& first = prompt->front();
  if (first.is_number()) {  // one prompt of token ids
    r.prompts.push_back(token_list(*prompt, "prompt", vocab));
  } else if (first.is_string() || first.is_array()) {
    if (prompt->size() > kMaxPrompts)
      throw invalid_field("prompt", "prompt lists " + str(prompt->size()) + " prompts; at most " + str(kMaxPrompts) +
                                        " are taken in one request");
    for (size_t i = 0; i < prompt->size(); ++i) {
      const nlohmann::json& p = (*prompt)[i];
      const std::string where = "prompt[" + str(i) + "]";
      if (first.is_string() != p.is_string() || (!p.is_string() && !p.is_array()))
        throw invalid_field("prompt", where + " is " + json_type_name(p) + ", but prompt[0] is " +
                                          json_type_name(first) + ": a list of prompts holds strings or token lists, not both");
      if (p.is_string()) {
        r.prompt_texts.push_back(p.get<std::string>());
        r.prompts.push_back(text_prompt(r.prompt_texts.back(), served, model));
      } else {
        r.prompts.push_back(token_list(p, where, vocab));
      }
    }
  } else {
    throw invalid_field("prompt", "prompt[0] must be a string, a token id or a list of token ids, got " +
                                      json_type_name(first));
  }
  if (r.prompt_texts.size() != r.prompts.size()) {  // token prompts: their text, for echo
    r.prompt_texts.clear();
    for (const auto& ids : r.prompts) r.prompt_texts.push_back(model.detokenize(ids));
  }
}

std::vector<std::string> read_stop(const nlohmann::json* stop) {
  std::vector<std::string> out;
  if (!stop) return out;
  const auto check = [](const nlohmann::json& s, const std::string& where) {
    if (!s.is_string()) throw invalid_field("stop", where + " must be a string, got " + json_type_name(s));
    const std::string text = s.get<std::string>();
    if (text.empty()) throw invalid_field("stop", where + " is an empty string");
    if (text.size() > kMaxStopBytes)
      throw invalid_field("stop", where + " is " + str(text.size()) + " bytes long; at most " + str(kMaxStopBytes));
    return text;
  };
  if (stop->is_string()) {
    out.push_back(check(*stop, "stop"));
  } else if (stop->is_array()) {
    if (stop->size() > kMaxStopStrings)
      throw invalid_field("stop", "stop lists " + str(stop->size()) + " strings; at most " + str(kMaxStopStrings));
    for (size_t i = 0; i < stop->size(); ++i) out.push_back(check((*stop)[i], "stop[" + str(i) + "]"));
  } else {
    throw invalid_field("stop", "stop must be a string or a list of strings, got " + json_type_name(*stop));
  }
  return out;
}

std::vector<std::pair<int32_t, float>> read_logit_bias(const nlohmann::json* bias, size_t vocab) {
  std::vector<std::pair<int32_t, float>> out;
  if (!bias) return out;
  if (!bias->is_object())
    throw invalid_field("logit_bias", "logit_bias must be an object of token ids to numbers, got " + json_type_name(*bias));
  if (bias->size() > kMaxLogitBias)
    throw invalid_field("logit_bias", "logit_bias has " + str(bias->size()) + " entries; at most " + str(kMaxLogitBias));
  for (const auto& [key, value] : bias->items()) {
    // Keys are decimal token ids: digits only, no sign, no leading zeros beyond "0".
    bool digits = !key.empty() && key.size() <= 10 && (key.size() == 1 || key[0] != '0');
    for (const char c : key) digits = digits && c >= '0' && c <= '9';
    if (!digits) throw invalid_field("logit_bias", "logit_bias key \"" + key + "\" is not a token id");
    const uint64_t id = std::stoull(key);
    if (id >= vocab)
      throw invalid_field("logit_bias", "logit_bias key " + key + " is outside the vocabulary [0, " + str(vocab) + ")");
    if (!value.is_number() || !std::isfinite(value.get<double>()))
      throw invalid_field("logit_bias", "logit_bias[\"" + key + "\"] must be a number, got " + json_type_name(value));
    out.push_back({int32_t(id), float(std::clamp(value.get<double>(), -1e9, 1e9))});  // the range is the engine's
  }
  return out;
}

std::vector<int32_t> read_stop_token_ids(const nlohmann::json* ids, size_t vocab) {
  std::vector<int32_t> out;
  if (!ids) return out;
  if (!ids->is_array())
    throw invalid_field("stop_token_ids", "stop_token_ids must be a list of token ids, got " + json_type_name(*ids));
  for (size_t i = 0; i < ids->size(); ++i) {
    const nlohmann::json& v = (*ids)[i];
    const bool integer = v.is_number_integer() || v.is_number_unsigned();
    if (!integer || v.get<int64_t>() < 0 || uint64_t(v.get<int64_t>()) >= vocab)
      throw invalid_field("stop_token_ids", "stop_token_ids[" + str(i) + "] must be a token id in [0, " + str(vocab) +
                                                "), got " + v.dump());
    out.push_back(v.get<int32_t>());
  }
  return out;
}

// prompt + max_tokens must fit the context: OpenAI refuses such a request rather than cutting it.
void check_context(const CompletionRequest& r, const ServedModel& served) {
  const size_t ctx = served.context_length, budget = r.options.max_new_tokens;
  for (size_t i = 0; i < r.prompts.size(); ++i) {
    const size_t n = r.prompts[i].size();
    const std::string which = r.prompts.size() == 1 ? "the prompt" : "prompt " + str(i);
    if (n > ctx)
      throw invalid_field("prompt", "this model's maximum context length is " + str(ctx) + " tokens, but " + which +
                                        " has " + str(n) + " tokens",
                          "context_length_exceeded");
    if (n + budget > ctx)
      throw invalid_field("max_tokens", "this model's maximum context length is " + str(ctx) + " tokens, but " + which +
                                            " has " + str(n) + " tokens and max_tokens is " + str(budget) + " (" +
                                            str(n + budget) + " in all): lower max_tokens to at most " + str(ctx - n) +
                                            " or shorten the prompt",
                          "context_length_exceeded");
  }
}

}  // namespace

CompletionRequest parse_completion_request(const nlohmann::json& body, const ServedModel& served, const Model& model) {
  CompletionRequest r;
  Fields f(body);
  GenerateOptions& o = r.options;

  const std::optional<std::string> name = f.string("model");
  if (!name) throw invalid_field("model", "model is required (this server serves \"" + served.id + "\")");
  if (*name != served.id)
    throw ApiError(404, "the model \"" + client_text(*name) + "\" does not exist: this server serves \"" + served.id + "\"", "model",
                   "model_not_found");
  r.model = *name;

  // OpenAI's defaults: 16 tokens, temperature 1, nothing else filtered.
  // The bound here only keeps the number sane; check_context says how it relates to the prompt.
  o.max_new_tokens = size_t(f.integer("max_tokens", 0, int64_t(1) << 30).value_or(kDefaultMaxTokens));
  // Ranges of the sampling options are the engine's (checked at submit, mapped to these names).
  o.temperature = f.real("temperature").value_or(1.0f);
  o.top_p = f.real("top_p").value_or(1.0f);
  o.n = size_t(f.integer("n", 1, 128).value_or(1));
  if (o.n > served.slots)
    throw invalid_field("n", "n is " + str(o.n) + ", but this server decodes at most " + str(served.slots) +
                                 " sequences at once (--parallel)");
  r.stream = f.boolean("stream").value_or(false);
  if (const nlohmann::json* so = f.get("stream_options")) {
    if (!so->is_object()) throw invalid_field("stream_options", "stream_options must be an object, got " + json_type_name(*so));
    if (!r.stream) throw invalid_field("stream_options", "stream_options is only allowed with stream: true");
    Fields sf(*so, "stream_options.");
    r.include_usage = sf.boolean("include_usage").value_or(false);
    sf.reject_unknown();
  }
  if (const auto lp = f.integer("logprobs", 0, kMaxLogprobs)) r.logprobs = size_t(*lp);
  r.echo = f.boolean("echo").value_or(false);
  o.stop = read_stop(f.get("stop"));
  o.presence_penalty = f.real("presence_penalty").value_or(0.0f);
  o.frequency_penalty = f.real("frequency_penalty").value_or(0.0f);
  o.logit_bias = read_logit_bias(f.get("logit_bias"), served.vocab_size);
  o.seed = f.unsigned_integer("seed");
  r.user = f.string("user").value_or("");
  if (const auto best_of = f.integer("best_of", 1, 128); best_of && size_t(*best_of) != o.n)
    throw invalid_field("best_of", "best_of other than n is not supported (got best_of " + str(size_t(*best_of)) +
                                       ", n " + str(o.n) + ")");
  if (const auto suffix = f.string("suffix"); suffix && !suffix->empty())
    throw invalid_field("suffix", "suffix (insertion) is not supported by GPT-2 models");

  // Extensions, named as vLLM names them.
  // top_k: -1 is vLLM's "off" (GenerateOptions' top_k is unsigned: 0 is off).
  const int64_t top_k = f.integer("top_k", -1, int64_t(1) << 30).value_or(0);
  o.top_k = top_k < 0 ? 0 : size_t(top_k);
  o.min_p = f.real("min_p").value_or(0.0f);
  o.repetition_penalty = f.real("repetition_penalty").value_or(1.0f);
  o.ignore_eos = f.boolean("ignore_eos").value_or(false);
  o.min_new_tokens = size_t(f.integer("min_tokens", 0, int64_t(1) << 30).value_or(0));
  o.stop_token_ids = read_stop_token_ids(f.get("stop_token_ids"), served.vocab_size);
  r.return_token_ids = f.boolean("return_token_ids").value_or(false);

  read_prompts(f.get("prompt"), served, model, r);
  f.reject_unknown();

  if (r.logprobs) {
    o.logprobs = true;
    o.top_logprobs = *r.logprobs;
  }
  if (r.choice_count() > kMaxChoices)
    throw invalid_field("n", str(r.prompts.size()) + " prompts x n " + str(o.n) + " = " + str(r.choice_count()) +
                                 " choices; at most " + str(kMaxChoices) + " in one request");
  check_context(r, served);
  return r;
}

}  // namespace eagerlm::server
