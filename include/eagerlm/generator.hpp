// eagerlm::Generator: text generation from one Model, with the KV cache for up to max_batch
// sequences of max_length tokens allocated once, at construction. Options are named as in
// Hugging Face's generate() and CTranslate2; the default is greedy decoding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common.hpp"
#include "error.hpp"
#include "export.h"
#include "model.hpp"

namespace eagerlm {

struct GenerateOptions {
  size_t max_new_tokens = 128;      // tokens to generate per prompt, at most
  float temperature = 0.0f;         // 0: greedy, as HF's do_sample=False; > 0: sample
  size_t top_k = 0;                 // keep the k most likely tokens; 0: off
  float top_p = 1.0f;               // nucleus: smallest set with this probability mass; 1: off
  float min_p = 0.0f;               // drop tokens below min_p x the top probability; 0: off
  float repetition_penalty = 1.0f;  // Hugging Face's rule on every token seen so far; 1: off
  uint64_t seed = 0;                // sampling seed: same seed, same ids (per prompt index)
  std::vector<std::string> stop;    // stop strings: the text is cut before the first one
  bool ignore_eos = false;          // keep going after the end-of-text token
  bool logprobs = false;            // fill Result::logprobs
};

struct Result {
  std::string text;             // the generated text (prompt excluded), valid UTF-8, cut before a stop string
  std::vector<int32_t> ids;     // the generated ids (an end-of-text id included when it ended the text)
  FinishReason finish_reason = FinishReason::kLength;
  std::vector<float> logprobs;  // log p(id) under the model, one per id, when asked for
};

// One step of streaming: the text that token `token` of prompt `index` makes visible. The text
// may be empty (an incomplete UTF-8 character or a possible stop string is held back); at the end
// of a sequence, held-back text arrives with token = -1. The texts of one prompt concatenate to
// its Result::text.
struct TokenEvent {
  size_t index = 0;
  int32_t token = -1;
  std::string_view text;
};
// Return false to stop that prompt's generation (FinishReason::kCallback). An exception thrown
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
  Result generate(std::string_view prompt, const GenerateOptions& options = {},
                  const OnToken& on_token = {});
  // Up to max_batch prompts at once; results in prompt order.
  std::vector<Result> generate_batch(const std::vector<std::string>& prompts,
                                     const GenerateOptions& options = {}, const OnToken& on_token = {});
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
