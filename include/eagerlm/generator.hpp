// eagerlm::Generator: text generation from one Model, with the KV cache for up to max_batch
// sequences of max_length tokens allocated once, at construction. Options are named as in
// Hugging Face's generate() and CTranslate2; the default is greedy decoding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common.hpp"
#include "error.hpp"
#include "export.h"
#include "model.hpp"

namespace eagerlm {

// Token choices an option set can ask for; the defaults are greedy decoding of up to 128 new
// tokens. Names follow Hugging Face's generate() and OpenAI's completions (docs/library.md has
// the full table, shared by the C API, the CLI, Python and the server).
struct GenerateOptions {
  size_t max_new_tokens = 128;      // tokens to generate per result, at most
  size_t min_new_tokens = 0;        // end-of-text and stop ids are suppressed before this many
  float temperature = 0.0f;         // 0: greedy, as HF's do_sample=False; > 0: sample
  size_t top_k = 0;                 // keep the k most likely tokens; 0: off
  float top_p = 1.0f;               // nucleus: smallest set with this probability mass; 1: off
  float min_p = 0.0f;               // drop tokens below min_p x the top probability; 0: off
  float repetition_penalty = 1.0f;  // Hugging Face's rule on every token seen so far; 1: off
  float presence_penalty = 0.0f;    // OpenAI's: minus this from every token generated so far
  float frequency_penalty = 0.0f;   // OpenAI's: minus this times the count of each generated token
  std::vector<std::pair<int32_t, float>> logit_bias;  // added to those tokens' logits
  size_t no_repeat_ngram_size = 0;                     // never repeat an n-gram of this size; 0: off
  std::optional<uint64_t> seed;     // sampling seed (same seed, same ids); unset: random, see Result::seed
  std::vector<std::string> stop;    // stop strings: the text is cut before the first one
  std::vector<int32_t> stop_token_ids;  // ids that end a result as end-of-text does
  bool ignore_eos = false;          // keep going after the end-of-text token
  bool logprobs = false;            // fill Result::logprobs
  size_t top_logprobs = 0;          // also the N most likely alternatives per token (<= 20)
  size_t n = 1;                     // results per prompt (independent samples, one prefill)
  size_t num_beams = 1;             // beam search when > 1 (Hugging Face's semantics)
  float length_penalty = 1.0f;      // beam score = sum of logprobs / length^length_penalty
  bool early_stopping = false;      // beam search ends once num_beams hypotheses are done
  size_t num_return_sequences = 1;  // beams returned per prompt, <= num_beams
};

// Where one result's time went (milliseconds), from when its request was submitted.
struct Timings {
  double queued_ms = 0;            // waiting for a cache slot
  double prefill_ms = 0;           // the prompt through the model
  double first_token_ms = 0;       // until the first generated token
  double decode_ms_per_token = 0;  // mean time between later tokens
  double total_ms = 0;
  size_t prompt_tokens = 0;
  size_t cached_prompt_tokens = 0;  // prompt tokens reused from the cache (not prefilled again)
  size_t generated_tokens = 0;
};

struct Result {
  std::string text;          // the generated text (prompt excluded), valid UTF-8, cut before a stop string
  std::vector<int32_t> ids;  // the generated ids (an end-of-text or stop id included when it ended the text)
  FinishReason finish_reason = FinishReason::kLength;
  std::vector<float> logprobs;  // log p(id) under the model, one per id, when asked for
  std::vector<std::vector<TokenLogprob>> top_logprobs;  // per id, the most likely alternatives
  double score = 0;   // beam search: the hypothesis' score; else the sum of logprobs when asked
  uint64_t seed = 0;  // the seed used (the one given, or the one drawn)
  size_t index = 0;   // the prompt it answers
  size_t sample = 0;  // which of that prompt's n results (or beam rank)
  Timings timings;
};

// One step of streaming: the text that token `token` of result `sample` of prompt `index` makes
// visible. The text may be empty (an incomplete UTF-8 character or a possible stop string is held
// back); at the end of a result, held-back text arrives with token = -1. The texts of one result
// concatenate to its Result::text. Beam search streams nothing (beams change until the end).
struct TokenEvent {
  size_t index = 0;
  size_t sample = 0;
  int32_t token = -1;
  std::string_view text;
  float logprob = 0.0f;  // with the logprobs option
  const std::vector<TokenLogprob>* top = nullptr;  // with top_logprobs; null otherwise
};
// Return false to stop that result's generation (FinishReason::kCallback). An exception thrown
// here propagates out of generate(); the Generator stays usable.
using OnToken = std::function<bool(const TokenEvent&)>;

// A Generator runs one call at a time: a call made while another is running on it (from another
// thread, or from inside the callback) throws kInvalidArgument. Give each thread its own
// Generator; they may all share one Model.
class EAGERLM_API Generator {
 public:
  // max_length: prompt plus generated tokens per sequence; 0 means the model's context length.
  // Allocates the KV cache (2 x layers x max_batch x max_length x n_embd floats) and the
  // activations now; generate() then allocates nothing on the device.
  explicit Generator(const Model& model, size_t max_batch = 1, size_t max_length = 0);
  ~Generator();
  Generator(Generator&&) noexcept;
  Generator& operator=(Generator&&) noexcept;
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  // One prompt. An empty prompt starts from the end-of-text token, as GPT-2's unconditional
  // samples do. Throws kInvalidArgument for a bad option, invalid UTF-8, or a prompt longer than
  // max_length.
  Result generate(std::string_view prompt, const GenerateOptions& options = {}, const OnToken& on_token = {});
  // Up to max_batch prompts at once (n x prompts sequences, or num_beams x prompts); results in
  // prompt order, each prompt's samples in order.
  std::vector<Result> generate_batch(const std::vector<std::string>& prompts, const GenerateOptions& options = {},
                                     const OnToken& on_token = {});
  // Prompts given as token ids (each non-empty).
  std::vector<Result> generate_tokens(const std::vector<std::vector<int32_t>>& prompts,
                                      const GenerateOptions& options = {}, const OnToken& on_token = {});

  size_t max_batch() const;
  size_t max_length() const;
  const Model& model() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace eagerlm
