// The bodies /v1/completions answers with, in OpenAI's shapes: the completion object, its
// choices and usage, server-sent events (one "data: {json}" per event, "data: [DONE]" last), and
// the legacy logprobs object {"tokens", "token_logprobs", "top_logprobs", "text_offset"}.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "eagerlm/common.hpp"
#include "eagerlm/model.hpp"

namespace eagerlm::server {

inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

// One server-sent event carrying `value`.
std::string sse_event(const nlohmann::json& value);
// JSON text of a value whose strings may hold bytes that are not UTF-8 (replaced by U+FFFD).
std::string json_text(const nlohmann::json& value);

// "stop" (end-of-text, a stop string or stop id) or "length".
const char* openai_finish_reason(FinishReason reason);

// {"id", "object": "text_completion", "created", "model", "system_fingerprint", "choices": []}
nlohmann::json completion_object(const std::string& id, int64_t created, const std::string& model);
nlohmann::json choice_object(size_t index, const std::string& text, nlohmann::json logprobs, nlohmann::json finish_reason);
nlohmann::json usage_object(size_t prompt_tokens, size_t completion_tokens);

// A token's text as OpenAI lists it: the text itself when its bytes are valid UTF-8, otherwise
// "bytes:\xNN..." (a token that holds part of a character).
std::string token_display(std::string_view bytes);

// The legacy logprobs of one choice, built token by token. text_offset counts characters
// (Unicode code points, as Python's len() does) from the start of the choice's text.
class LegacyLogprobs {
 public:
  explicit LegacyLogprobs(const Model& model) : model_(&model) {}
  // A token with its log-probability and alternatives; no logprob (a prompt's first token, with
  // echo) is null, and so are its alternatives.
  void add(int32_t id, std::optional<float> logprob, const std::vector<TokenLogprob>* top);
  size_t size() const { return tokens_.size(); }
  // Everything so far, or (streaming) what was added since the last take().
  nlohmann::json all() const;
  nlohmann::json take();

 private:
  nlohmann::json range(size_t from) const;
  const Model* model_;
  std::vector<std::string> tokens_;
  nlohmann::json token_logprobs_ = nlohmann::json::array(), top_logprobs_ = nlohmann::json::array();
  std::vector<size_t> offsets_;
  size_t chars_ = 0, taken_ = 0;
};

}  // namespace eagerlm::server
