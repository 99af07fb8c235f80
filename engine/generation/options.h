// What one generation request may ask for, and what it gets back. Every front end (the C++ and
// C APIs, the CLI, Python, the server) fills these same structs; option_table.h names each
// option once, with its default, its range and its help text, for all of them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eagerlm/common.hpp"  // FinishReason, finish_reason_name (public API)
#include "engine/generation/sampling.h"

namespace eagerlm {

// Hugging Face's beam search (num_beams > 1 switches it on; sampling options other than the
// logit processors are then unused: beams are chosen by log-probability).
struct BeamOptions {
  int32_t num_beams = 1;             // 1: no beam search
  float length_penalty = 1.0f;       // a hypothesis scores sum(logprobs) / length^length_penalty
  bool early_stopping = false;       // stop once num_beams hypotheses are finished
  int32_t num_return_sequences = 1;  // best hypotheses returned, <= num_beams
};

struct GenerationOptions {
  int32_t max_new_tokens = 128;
  int32_t min_new_tokens = 0;  // end-of-text and stop token ids are suppressed before this many
  SamplingOptions sampling;    // greedy by default; penalties, logit_bias, seed
  std::vector<std::string> stop;         // stop strings (the text is cut before them)
  std::vector<int32_t> stop_token_ids;   // ids that end the sequence like end-of-text does
  bool ignore_eos = false;               // keep going after <|endoftext|>
  bool logprobs = false;                 // record log p(token) of each generated token
  int32_t top_logprobs = 0;              // also the N most likely alternatives per token (<= 20)
  int32_t n = 1;                         // independent samples of the prompt (one prefill)
  BeamOptions beams;
  int32_t eos_id = 50256;

  void validate() const;  // throws OptionError naming the option
  // Results one request gives: n samples, or num_return_sequences beams.
  int32_t result_count() const { return beams.num_beams > 1 ? beams.num_return_sequences : n; }
  // Cache slots one request holds while it runs: its n samples, or all num_beams beams (more
  // than it returns when num_return_sequences < num_beams).
  int32_t slots_needed() const { return beams.num_beams > 1 ? beams.num_beams : n; }
};

// Where one request's time went, from the moment it was submitted.
struct RequestTimings {
  double queued_ms = 0;            // waiting for a cache slot
  double prefill_ms = 0;           // from admission to the prompt's last token through the model
  double first_token_ms = 0;       // from submission to its first generated token
  double decode_ms_per_token = 0;  // mean time between its later tokens
  double total_ms = 0;             // from submission to its last token
  int64_t prompt_tokens = 0;
  int64_t cached_prompt_tokens = 0;  // prompt tokens whose keys and values were reused, not prefilled
  int64_t generated_tokens = 0;
};

struct GenerationResult {
  std::vector<int32_t> ids;  // generated ids only (an end-of-text or stop id included when it ended it)
  std::string text;          // their text, cut before a stop string; end-of-text and stop ids not rendered
  FinishReason finish_reason = FinishReason::kLength;
  std::vector<float> logprobs;                         // one per id when asked for
  std::vector<std::vector<TokenLogprob>> top_logprobs;  // top_logprobs alternatives per id, most likely first
  double score = 0;       // beam search: the hypothesis' length-penalized score; else sum of logprobs when asked
  uint64_t seed = 0;      // the seed its sampling used (drawn at random when none was given)
  int32_t sample = 0;     // which of the request's results (sample or beam rank)
  RequestTimings timings;
};

// Fills options.sampling.seed when it is not set: from std::random_device, so that every front
// end draws an unset seed the same way. Returns the seed.
uint64_t resolve_seed(SamplingOptions& options);

}  // namespace eagerlm
