#include "api/option_table.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "engine/core/error.h"

namespace eagerlm::library {

namespace {

[[noreturn]] void bad_value(std::string_view name, const char* expected, std::string_view value) {
  throw Error(ErrorCode::kInvalidArgument,
              std::string(name) + ": expected " + expected + ", got '" + std::string(value) + "'");
}

uint64_t parse_unsigned(std::string_view name, std::string_view text, uint64_t max = std::numeric_limits<uint64_t>::max()) {
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v > max)
    bad_value(name, "an integer >= 0 in decimal", text);
  return v;
}

float parse_float(std::string_view name, std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) ||
      std::fabs(v) > double(std::numeric_limits<float>::max()))
    bad_value(name, "a finite number", text);
  return float(v);
}

bool parse_bool(std::string_view name, std::string_view text) {
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  bad_value(name, "true, false, 1 or 0", text);
}

int32_t parse_id(std::string_view name, std::string_view text) {
  return int32_t(parse_unsigned(name, text, uint64_t(std::numeric_limits<int32_t>::max())));
}

#define EAGERLM_SIZE_OPTION(field)                                                                  \
  [](GenerateOptions& o, std::string_view name, std::string_view text) {                            \
    o.field = size_t(parse_unsigned(name, text, std::numeric_limits<size_t>::max()));               \
  }
#define EAGERLM_FLOAT_OPTION(field) \
  [](GenerateOptions& o, std::string_view name, std::string_view text) { o.field = parse_float(name, text); }
#define EAGERLM_BOOL_OPTION(field) \
  [](GenerateOptions& o, std::string_view name, std::string_view text) { o.field = parse_bool(name, text); }

const std::vector<OptionSpec> kOptions = {
    {"max_new_tokens", "integer >= 0", "tokens to generate per result, at most", EAGERLM_SIZE_OPTION(max_new_tokens)},
    {"min_new_tokens", "integer >= 0", "end-of-text and stop ids are suppressed before this many tokens",
     EAGERLM_SIZE_OPTION(min_new_tokens)},
    {"temperature", "number >= 0", "0: greedy; > 0: sample at this temperature", EAGERLM_FLOAT_OPTION(temperature)},
    {"top_k", "integer >= 0", "keep the k most likely tokens; 0: off", EAGERLM_SIZE_OPTION(top_k)},
    {"top_p", "number in (0, 1]", "keep the smallest set with this probability mass; 1: off",
     EAGERLM_FLOAT_OPTION(top_p)},
    {"min_p", "number in [0, 1]", "drop tokens below min_p times the top probability; 0: off",
     EAGERLM_FLOAT_OPTION(min_p)},
    {"repetition_penalty", "number > 0", "Hugging Face's penalty on every token seen so far; 1: off",
     EAGERLM_FLOAT_OPTION(repetition_penalty)},
    {"presence_penalty", "number in [-2, 2]", "OpenAI's: minus this for every token generated so far",
     EAGERLM_FLOAT_OPTION(presence_penalty)},
    {"frequency_penalty", "number in [-2, 2]", "OpenAI's: minus this times each generated token's count",
     EAGERLM_FLOAT_OPTION(frequency_penalty)},
    {"logit_bias", "ID:BIAS (repeatable)", "adds BIAS (in [-100, 100]) to token ID's logit",
     [](GenerateOptions& o, std::string_view name, std::string_view text) {
       const size_t colon = text.find(':');
       if (colon == std::string_view::npos) bad_value(name, "ID:BIAS, e.g. 50256:-100", text);
       o.logit_bias.push_back({parse_id(name, text.substr(0, colon)), parse_float(name, text.substr(colon + 1))});
     }},
    {"no_repeat_ngram_size", "integer >= 0", "never repeat an n-gram of this size; 0: off",
     EAGERLM_SIZE_OPTION(no_repeat_ngram_size)},
    {"seed", "integer >= 0, or \"random\"", "sampling seed; \"random\" (the default) draws one, see the result's seed",
     [](GenerateOptions& o, std::string_view name, std::string_view text) {
       if (text == "random") {
         o.seed.reset();
       } else {
         o.seed = parse_unsigned(name, text);
       }
     }},
    {"stop", "text (repeatable)", "stop when this text appears; the text is cut before it",
     [](GenerateOptions& o, std::string_view, std::string_view text) { o.stop.emplace_back(text); }},
    {"stop_token_ids", "token id (repeatable)", "ids that end a result as end-of-text does",
     [](GenerateOptions& o, std::string_view name, std::string_view text) {
       o.stop_token_ids.push_back(parse_id(name, text));
     }},
    {"ignore_eos", "true/false", "keep going after the end-of-text token", EAGERLM_BOOL_OPTION(ignore_eos)},
    {"logprobs", "true/false", "record log p(token) of each generated token", EAGERLM_BOOL_OPTION(logprobs)},
    {"top_logprobs", "integer in [0, 20]", "also the N most likely alternatives at each token",
     EAGERLM_SIZE_OPTION(top_logprobs)},
    {"n", "integer >= 1", "results per prompt: independent samples sharing one prefill", EAGERLM_SIZE_OPTION(n)},
    {"num_beams", "integer >= 1", "beam search with this many beams when > 1", EAGERLM_SIZE_OPTION(num_beams)},
    {"length_penalty", "number", "beam score = sum of logprobs / length^length_penalty",
     EAGERLM_FLOAT_OPTION(length_penalty)},
    {"early_stopping", "true/false", "beam search ends once num_beams hypotheses are finished",
     EAGERLM_BOOL_OPTION(early_stopping)},
    {"num_return_sequences", "integer >= 1", "beams returned per prompt, at most num_beams",
     EAGERLM_SIZE_OPTION(num_return_sequences)},
};

}  // namespace

const std::vector<OptionSpec>& option_table() { return kOptions; }

void set_option(GenerateOptions& options, std::string_view name, std::string_view text) {
  for (const OptionSpec& spec : kOptions)
    if (name == spec.name) return spec.set(options, name, text);
  std::string known;
  for (const OptionSpec& spec : kOptions) known += (known.empty() ? "" : ", ") + std::string(spec.name);
  throw Error(ErrorCode::kInvalidArgument, "unknown option '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace eagerlm::library
