#include "engine/generation/options.h"

#include <cmath>
#include <random>

#include "engine/core/error.h"

namespace eagerlm {

namespace {
constexpr int32_t kMaxTopLogprobs = 20;  // OpenAI's limit
}

void GenerationOptions::validate() const {
  if (max_new_tokens < 0) throw OptionError("max_new_tokens", ">= 0", std::to_string(max_new_tokens));
  if (min_new_tokens < 0 || min_new_tokens > max_new_tokens)
    throw OptionError("min_new_tokens", "in [0, max_new_tokens = " + std::to_string(max_new_tokens) + "]",
                      std::to_string(min_new_tokens));
  sampling.validate();
  for (int32_t id : stop_token_ids)
    if (id < 0) throw OptionError("stop_token_ids", "token ids >= 0", std::to_string(id));
  if (top_logprobs < 0 || top_logprobs > kMaxTopLogprobs)
    throw OptionError("top_logprobs", "in [0, " + std::to_string(kMaxTopLogprobs) + "]", std::to_string(top_logprobs));
  if (n < 1) throw OptionError("n", ">= 1", std::to_string(n));
  if (beams.num_beams < 1) throw OptionError("num_beams", ">= 1", std::to_string(beams.num_beams));
  if (beams.num_beams > 1) {
    if (n != 1) throw OptionError("n", "1 with beam search (use num_return_sequences)", std::to_string(n));
    if (!sampling.greedy())
      throw OptionError("temperature", "0 with beam search (beams are chosen by log-probability)",
                        std::to_string(sampling.temperature));
    // Beams change until the search ends, so nothing streams and nothing is cut mid-way.
    if (!stop.empty()) throw OptionError("stop", "empty with beam search", std::to_string(stop.size()) + " strings");
    if (!stop_token_ids.empty())
      throw OptionError("stop_token_ids", "empty with beam search", std::to_string(stop_token_ids.size()) + " ids");
    if (logprobs || top_logprobs > 0)
      throw OptionError(logprobs ? "logprobs" : "top_logprobs", "off with beam search (see the result's score)", "on");
    // Flax's beam search always ends a hypothesis at end-of-text: it has no way to ignore it.
    if (ignore_eos) throw OptionError("ignore_eos", "off with beam search", "on");
    if (eos_id < 0) throw OptionError("eos_id", ">= 0 with beam search", std::to_string(eos_id));
  }
  if (beams.num_return_sequences < 1 || beams.num_return_sequences > beams.num_beams)
    throw OptionError("num_return_sequences", "in [1, num_beams = " + std::to_string(beams.num_beams) + "]",
                      std::to_string(beams.num_return_sequences));
  if (!std::isfinite(beams.length_penalty))
    throw OptionError("length_penalty", "a finite number", std::to_string(beams.length_penalty));
}

uint64_t resolve_seed(SamplingOptions& options) {
  if (!options.seed) {
    std::random_device device;
    options.seed = (uint64_t(device()) << 32) ^ uint64_t(device());
  }
  return *options.seed;
}

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::kEos: return "eos";
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kCallback: return "callback";
    case FinishReason::kCancelled: return "cancelled";
  }
  return "?";
}

}  // namespace eagerlm
