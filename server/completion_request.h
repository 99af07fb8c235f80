// POST /v1/completions: OpenAI's request body, checked and translated into the engine's options.
// Here: the JSON types, OpenAI's own rules (prompt forms, model name, n within the slots, prompt +
// max_tokens within the context, stop and logit_bias shapes), as ApiError 400 (404 for an unknown
// model) naming the field and the numbers. The options' ranges are the engine's: it checks them
// at submit and completions.cpp names the request field in the 400.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eagerlm/generator.hpp"
#include "eagerlm/model.hpp"

namespace eagerlm::server {

// What the checks need to know about the model being served.
struct ServedModel {
  std::string id;             // the name clients put in "model"
  size_t context_length = 0;  // tokens per request: prompt + max_tokens (the engine's max_length)
  size_t vocab_size = 0;
  size_t slots = 0;           // sequences decoded together: n may not exceed it
  int32_t eos_token_id = -1;
};

inline constexpr size_t kMaxPrompts = 64;        // prompts in one request
inline constexpr size_t kMaxChoices = 256;       // prompts x n
inline constexpr size_t kMaxStopStrings = 16;    // OpenAI allows 4
inline constexpr size_t kMaxStopBytes = 256;     // per stop string
inline constexpr size_t kMaxLogitBias = 1024;    // entries
inline constexpr int64_t kMaxLogprobs = 20;      // the engine's top_logprobs limit (OpenAI: 5)
inline constexpr int64_t kDefaultMaxTokens = 16;  // OpenAI's default

struct CompletionRequest {
  std::string model;
  std::vector<std::vector<int32_t>> prompts;  // token ids, one list per prompt, each non-empty
  std::vector<std::string> prompt_texts;      // each prompt as text (what echo returns)
  GenerateOptions options;                    // the same for every prompt; options.n choices each
  bool stream = false;
  bool include_usage = false;                 // stream_options.include_usage
  bool echo = false;
  std::optional<size_t> logprobs;             // the legacy top-N; unset: no logprobs
  bool return_token_ids = false;              // extension: token_ids in every choice
  std::string user;

  size_t choice_count() const { return prompts.size() * options.n; }
};

// Checks `body` (already parsed) against OpenAI's rules and the served model's limits; tokenizes
// text prompts with `model`. Throws ApiError.
CompletionRequest parse_completion_request(const nlohmann::json& body, const ServedModel& served, const Model& model);

}  // namespace eagerlm::server
