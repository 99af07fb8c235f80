/* eagerlm's C API: everything the C++ API does, behind opaque handles, for C programs and for
 * other languages' foreign-function interfaces (Python ctypes, Rust, Go).
 *
 * Conventions (docs/library.md has the details and examples):
 * - Every call that can fail returns an eagerlm_status; EAGERLM_OK is 0. eagerlm_last_error()
 *   then says what went wrong, naming the file, option or argument. No exception and no abort
 *   ever crosses this API: bad input gives a status.
 * - Handles are created by *_create / *_load / *_initialize / eagerlm_generate and released by the
 *   matching *_free (which accepts NULL). A generator keeps its model's weights alive, so a
 *   model handle may be freed before the generators made from it.
 * - Sizes and counts are size_t. Output buffers follow one size-query convention: the call always
 *   stores the size the whole output needs in *count (array elements) or *size (text bytes, not
 *   counting the terminating NUL). With a NULL buffer it stores only that and returns EAGERLM_OK.
 *   With a buffer too small (capacity < count, or capacity < size + 1 for text) it writes
 *   nothing and returns EAGERLM_ERROR_BUFFER_TOO_SMALL. Text is written NUL-terminated.
 * - Threads: a model may be used by any number of threads at once; a generator by one thread at
 *   a time (a concurrent call on the same generator fails with EAGERLM_ERROR_INVALID_ARGUMENT).
 */
#ifndef EAGERLM_H
#define EAGERLM_H

#include <stddef.h>
#include <stdint.h>

#include "eagerlm/version.h"
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum eagerlm_status {
  EAGERLM_OK = 0,
  EAGERLM_ERROR_INVALID_ARGUMENT = 1,  /* a bad option, argument or value from the caller */
  EAGERLM_ERROR_INVALID_FILE = 2,      /* a model, config or tokenizer file that is malformed */
  EAGERLM_ERROR_IO = 3,                /* a file or directory that cannot be opened or read */
  EAGERLM_ERROR_UNSUPPORTED = 4,       /* e.g. CUDA asked for, but no GPU or built without CUDA */
  EAGERLM_ERROR_OUT_OF_MEMORY = 5,     /* an allocation failed or would not fit */
  EAGERLM_ERROR_INTERNAL = 6,          /* a bug in eagerlm */
  EAGERLM_ERROR_BUFFER_TOO_SMALL = 7,  /* see the size-query convention above */
  EAGERLM_ERROR_BUSY = 8,              /* no room now (a full request queue): retry later */
  EAGERLM_STATUS_MAX_ENUM = 0x7fffffff /* not a status: makes every enum here an int */
} eagerlm_status;

typedef enum eagerlm_device {
  EAGERLM_DEVICE_CPU = 0,
  EAGERLM_DEVICE_CUDA = 1,
  EAGERLM_DEVICE_MAX_ENUM = 0x7fffffff
} eagerlm_device;

typedef enum eagerlm_finish_reason {
  EAGERLM_FINISH_EOS = 0,      /* the model produced its end-of-text token */
  EAGERLM_FINISH_STOP = 1,     /* a stop string appeared (the text is cut before it) */
  EAGERLM_FINISH_LENGTH = 2,   /* max_new_tokens, or the generator's max_length, reached */
  EAGERLM_FINISH_CALLBACK = 3, /* the token callback returned 0 */
  EAGERLM_FINISH_CANCELLED = 4, /* the request was cancelled (eagerlm_request_cancel) */
  EAGERLM_FINISH_MAX_ENUM = 0x7fffffff
} eagerlm_finish_reason;

typedef struct eagerlm_model eagerlm_model;         /* weights and tokenizer; shareable */
typedef struct eagerlm_generator eagerlm_generator; /* a KV cache for max_batch sequences */
typedef struct eagerlm_options eagerlm_options;     /* generation options */
typedef struct eagerlm_result eagerlm_result;       /* the outputs of one eagerlm_generate call */

/* ---- The library ---- */

EAGERLM_API const char* eagerlm_version(void); /* "MAJOR.MINOR.PATCH" of the loaded library */
/* What the last call on this thread that returned a status said: "" after EAGERLM_OK, else the
 * message. Valid until this thread's next eagerlm call. */
EAGERLM_API const char* eagerlm_last_error(void);
EAGERLM_API const char* eagerlm_status_name(eagerlm_status status);               /* "ok", "invalid argument", ... */
EAGERLM_API const char* eagerlm_finish_reason_name(eagerlm_finish_reason reason); /* "eos", ... */
EAGERLM_API int eagerlm_cuda_available(void); /* 1 with the CUDA backend and a GPU, else 0 */
/* CPU threads for later calls from any thread; 0 restores the default (OMP_NUM_THREADS or all
 * cores available to the process). */
EAGERLM_API eagerlm_status eagerlm_set_cpu_threads(int n);

/* ---- Models ---- */

/* A Hugging Face GPT-2 directory (config.json + model.safetensors, or shards). */
EAGERLM_API eagerlm_status eagerlm_model_load(const char* directory, eagerlm_device device, eagerlm_model** model);
/* Random weights for a preset ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl") or a config.json
 * path (or a directory holding one), drawn from `seed` exactly as `eagerlm init` draws them. */
EAGERLM_API eagerlm_status eagerlm_model_initialize(const char* preset_or_config, uint64_t seed, eagerlm_device device,
                                                    eagerlm_model** model);
/* The same with the types the model is held in (docs/library.md, "Weight types"): weights
 * "f32", "bf16", "f16" or "int8" (converted at load), or NULL / "" for as the checkpoint stores
 * them (random weights: f32); kv_type "f32", "bf16" or "f16", or NULL / "" for f32. Another
 * name is EAGERLM_ERROR_INVALID_ARGUMENT naming it. */
EAGERLM_API eagerlm_status eagerlm_model_load_as(const char* directory, eagerlm_device device, const char* weights,
                                                 const char* kv_type, eagerlm_model** model);
EAGERLM_API eagerlm_status eagerlm_model_initialize_as(const char* preset_or_config, uint64_t seed,
                                                       eagerlm_device device, const char* weights,
                                                       const char* kv_type, eagerlm_model** model);
/* Every load choice at once (LoadOptions in model.hpp): a NULL or "" member takes its default.
 * gemm_math: the products' math, "fp32" (default); on CUDA "tf32" or "bf16" (tensor cores); on
 * the CPU "bf16" for bf16 weights where the CPU has AMX or AVX512_BF16 (inputs rounded to bf16;
 * elsewhere EAGERLM_ERROR_UNSUPPORTED saying why). options NULL: all defaults. */
typedef struct eagerlm_load_options {
  const char* weights;
  const char* kv_type;
  const char* gemm_math;
} eagerlm_load_options;
EAGERLM_API eagerlm_status eagerlm_model_load_with(const char* directory, eagerlm_device device,
                                                   const eagerlm_load_options* options, eagerlm_model** model);
EAGERLM_API eagerlm_status eagerlm_model_initialize_with(const char* preset_or_config, uint64_t seed,
                                                         eagerlm_device device, const eagerlm_load_options* options,
                                                         eagerlm_model** model);
EAGERLM_API void eagerlm_model_free(eagerlm_model* model);
EAGERLM_API size_t eagerlm_model_vocab_size(const eagerlm_model* model);     /* 0 for NULL */
EAGERLM_API size_t eagerlm_model_context_length(const eagerlm_model* model); /* 0 for NULL */
EAGERLM_API int32_t eagerlm_model_eos_token_id(const eagerlm_model* model);  /* -1 for NULL */
/* The types it is held in: "f32", "bf16", "f16" or "int8" (weights), "f32", "bf16" or "f16" (KV
 * cache); "" for NULL. The strings are the library's and never freed. */
EAGERLM_API const char* eagerlm_model_weights(const eagerlm_model* model);
EAGERLM_API const char* eagerlm_model_kv_type(const eagerlm_model* model);
/* The products' math: "fp32", "tf32" or "bf16"; "" for NULL. */
EAGERLM_API const char* eagerlm_model_gemm_math(const eagerlm_model* model);

/* Token ids of UTF-8 text (text_size bytes). "<|endoftext|>" is ordinary text unless
 * parse_special is nonzero. Invalid UTF-8 is EAGERLM_ERROR_INVALID_ARGUMENT. */
EAGERLM_API eagerlm_status eagerlm_tokenize(const eagerlm_model* model, const char* text, size_t text_size,
                                            int parse_special, int32_t* ids, size_t capacity, size_t* count);
/* The bytes the ids stand for (not necessarily valid UTF-8 when a character is split). */
EAGERLM_API eagerlm_status eagerlm_detokenize(const eagerlm_model* model, const int32_t* ids, size_t n_ids, char* text,
                                              size_t capacity, size_t* size);
/* Next-token logits at every position of `batch` sequences, given concatenated in `ids` with
 * their lengths in `lengths`: (sum of lengths) rows of vocab_size floats, row-major, sequence
 * after sequence. */
EAGERLM_API eagerlm_status eagerlm_logits(const eagerlm_model* model, const int32_t* ids, const size_t* lengths,
                                          size_t batch, float* logits, size_t capacity, size_t* count);

/* Log-probabilities of each token given the ones before it (natural log, the model's raw
 * distribution), for `batch` sequences of 1 to context_length tokens, given concatenated in `ids`
 * with their lengths in `lengths`: (sum of (length - 1)) floats, sequence after sequence; value i
 * of a sequence is log p(ids[i + 1] | ids[0..i]). The logits are never formed. */
EAGERLM_API eagerlm_status eagerlm_score(const eagerlm_model* model, const int32_t* ids, const size_t* lengths,
                                         size_t batch, float* logprobs, size_t capacity, size_t* count);

/* ---- Generation ---- */

/* Options start at the library defaults: greedy, max_new_tokens 128, no stop strings, a random
 * seed (reported by eagerlm_result_info). */
EAGERLM_API eagerlm_status eagerlm_options_create(eagerlm_options** options);
EAGERLM_API void eagerlm_options_free(eagerlm_options* options);
/* Sets one option by name, the value given as text (parsed strictly, checked at once). The names
 * and values are those of docs/library.md's option table:
 *   max_new_tokens, min_new_tokens, top_k, no_repeat_ngram_size, top_logprobs (0 .. 20), n,
 *   num_beams, num_return_sequences (integers >= 0), seed (0 .. 2^64-1, or "random"),
 *   temperature (>= 0; 0 = greedy), top_p (0 < p <= 1), min_p (0 .. 1),
 *   repetition_penalty (> 0), presence_penalty, frequency_penalty (-2 .. 2), length_penalty,
 *   ignore_eos, logprobs, early_stopping ("true"/"false"/"1"/"0"),
 *   stop (adds one stop string), stop_token_ids (adds one id), logit_bias ("ID:BIAS", adds one):
 *   those three may be given several times.
 * An unknown name or a bad value is EAGERLM_ERROR_INVALID_ARGUMENT, naming the option. */
EAGERLM_API eagerlm_status eagerlm_options_set(eagerlm_options* options, const char* name, const char* value);

/* max_length: prompt plus generated tokens per sequence; 0 means the model's context length. */
EAGERLM_API eagerlm_status eagerlm_generator_create(const eagerlm_model* model, size_t max_batch, size_t max_length,
                                                    eagerlm_generator** generator);
EAGERLM_API void eagerlm_generator_free(eagerlm_generator* generator);

/* Called for each generated token of prompt `index` with the text it makes visible (text_size
 * bytes, NUL-terminated, possibly empty); held-back text arrives at the end with token = -1.
 * With n > 1 the tokens of every sample of the prompt arrive here (eagerlm_result_info tells
 * them apart afterwards). Return nonzero to go on, 0 to stop that result (EAGERLM_FINISH_CALLBACK). */
typedef int (*eagerlm_token_callback)(size_t index, int32_t token, const char* text, size_t text_size, void* user_data);

/* Generates from n_prompts prompts (beyond the generator's max_batch sequences they wait for a
 * free slot). prompt_sizes may be NULL for NUL-terminated prompts; options may be NULL for the
 * defaults; callback may be NULL. On success *result holds n (or num_return_sequences) outputs
 * per prompt, in prompt order; free it with eagerlm_result_free. */
EAGERLM_API eagerlm_status eagerlm_generate(eagerlm_generator* generator, const char* const* prompts,
                                            const size_t* prompt_sizes, size_t n_prompts,
                                            const eagerlm_options* options, eagerlm_token_callback callback,
                                            void* user_data, eagerlm_result** result);
/* The same with prompts given as token ids, concatenated in `ids`, with their lengths. */
EAGERLM_API eagerlm_status eagerlm_generate_tokens(eagerlm_generator* generator, const int32_t* ids,
                                                   const size_t* lengths, size_t n_prompts,
                                                   const eagerlm_options* options, eagerlm_token_callback callback,
                                                   void* user_data, eagerlm_result** result);

EAGERLM_API size_t eagerlm_result_count(const eagerlm_result* result); /* 0 for NULL */
/* Output `index`: its text (valid UTF-8, prompt excluded), generated ids, finish reason, and
 * log-probabilities (present when the logprobs option was set). */
EAGERLM_API eagerlm_status eagerlm_result_text(const eagerlm_result* result, size_t index, char* text, size_t capacity,
                                               size_t* size);
EAGERLM_API eagerlm_status eagerlm_result_ids(const eagerlm_result* result, size_t index, int32_t* ids, size_t capacity,
                                              size_t* count);
EAGERLM_API eagerlm_status eagerlm_result_finish_reason(const eagerlm_result* result, size_t index,
                                                        eagerlm_finish_reason* reason);
EAGERLM_API eagerlm_status eagerlm_result_logprobs(const eagerlm_result* result, size_t index, float* logprobs,
                                                   size_t capacity, size_t* count);
/* The alternatives at token `position` of output `index` (with the top_logprobs option): their ids
 * and log-probabilities, most likely first; both buffers hold `capacity` entries (either may be
 * NULL to skip it; both NULL: size query). */
EAGERLM_API eagerlm_status eagerlm_result_top_logprobs(const eagerlm_result* result, size_t index, size_t position,
                                                       int32_t* ids, float* logprobs, size_t capacity, size_t* count);

/* Where an output came from and where its time went (milliseconds since its request was submitted). */
typedef struct eagerlm_result_info {
  size_t prompt_index; /* the prompt it answers */
  size_t sample;       /* which of that prompt's outputs (sample index, or beam rank) */
  uint64_t seed;       /* the sampling seed used: the one given, or the one drawn */
  double score;        /* beam search: the hypothesis' score; else the sum of logprobs (with logprobs) */
  double queued_ms, prefill_ms, first_token_ms, decode_ms_per_token, total_ms;
  size_t prompt_tokens, cached_prompt_tokens, generated_tokens;
} eagerlm_result_info;
EAGERLM_API eagerlm_status eagerlm_result_info_get(const eagerlm_result* result, size_t index,
                                                   eagerlm_result_info* info);
EAGERLM_API void eagerlm_result_free(eagerlm_result* result);

/* ---- Continuous batching ----
 * An engine runs requests submitted from any thread at any time together, on a worker thread of
 * its own, over one KV cache of max_batch sequences: a request joins the running batch at the
 * next step and leaves when done. Every call on an engine or a request is thread-safe. */
typedef struct eagerlm_engine eagerlm_engine;
typedef struct eagerlm_request eagerlm_request;

/* max_queue: requests that may wait for a slot (0: no limit); submitting beyond it is
 * EAGERLM_ERROR_BUSY. max_length: tokens per sequence, 0 for the model's context length. */
EAGERLM_API eagerlm_status eagerlm_engine_create(const eagerlm_model* model, size_t max_batch, size_t max_length,
                                                 size_t max_queue, eagerlm_engine** engine);
/* Cancels whatever is queued or running, waits for the worker, frees the engine. Requests not yet
 * freed stay valid (done, cancelled). */
EAGERLM_API void eagerlm_engine_free(eagerlm_engine* engine);
/* Queues one prompt (prompt_size bytes; options may be NULL). Tokens are then pulled with
 * eagerlm_request_next, results with eagerlm_request_wait. */
EAGERLM_API eagerlm_status eagerlm_engine_submit(eagerlm_engine* engine, const char* prompt, size_t prompt_size,
                                                 const eagerlm_options* options, eagerlm_request** request);
EAGERLM_API eagerlm_status eagerlm_engine_submit_tokens(eagerlm_engine* engine, const int32_t* ids, size_t n_ids,
                                                        const eagerlm_options* options, eagerlm_request** request);

typedef struct eagerlm_engine_stats {
  size_t queued, running, busy_slots, max_batch;
  uint64_t steps, prefill_tokens, cached_tokens, generated_tokens;
} eagerlm_engine_stats;
EAGERLM_API eagerlm_status eagerlm_engine_stats_get(const eagerlm_engine* engine, eagerlm_engine_stats* stats);
/* Steps of one kind since the engine started: how many, the rows (tokens) they carried, and the
 * model's seconds on them. */
typedef struct eagerlm_step_counts {
  uint64_t steps, rows;
  double seconds;
} eagerlm_step_counts;
/* The engine's steps by what they carried: decode rows only, decode rows beside a prompt chunk,
 * prompt chunks only. Each out-pointer may be NULL. */
EAGERLM_API eagerlm_status eagerlm_engine_step_counts_get(const eagerlm_engine* engine, eagerlm_step_counts* decode,
                                                          eagerlm_step_counts* mixed, eagerlm_step_counts* prompt);

/* One streamed token: `text` (text_size bytes, NUL-terminated) stays valid until the next call
 * on the same request. id -1: held-back text released at the end of a result. */
typedef struct eagerlm_token {
  size_t sample;
  int32_t id;
  const char* text;
  size_t text_size;
  float logprob;
} eagerlm_token;
/* Waits up to timeout_ms (negative: no limit) for the next token. *has_token is 1 with one in
 * *token, 0 when the wait timed out or the request is done with every token taken. */
EAGERLM_API eagerlm_status eagerlm_request_next(eagerlm_request* request, int64_t timeout_ms, eagerlm_token* token,
                                                int* has_token);
/* Blocks until the request is done; its outputs (free with eagerlm_result_free), or the error
 * that ended it. */
EAGERLM_API eagerlm_status eagerlm_request_wait(eagerlm_request* request, eagerlm_result** result);
/* Ends it now (outputs so far, EAGERLM_FINISH_CANCELLED); no effect once done. */
EAGERLM_API eagerlm_status eagerlm_request_cancel(eagerlm_request* request);
EAGERLM_API int eagerlm_request_done(const eagerlm_request* request); /* 1 when done, 0 otherwise or NULL */
EAGERLM_API void eagerlm_request_free(eagerlm_request* request);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EAGERLM_H */
