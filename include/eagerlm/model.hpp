// eagerlm::Model: a GPT-2-style model with its tokenizer, loaded from a Hugging Face directory or
// initialized from a config. A Model is a cheap handle to immutable weights: copy it freely, and
// share one between any number of Generators and threads (see docs/library.md, "Threads").
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
#include "parameters.hpp"

namespace eagerlm {

struct ModelInfo {
  size_t n_layer = 0;
  size_t n_embd = 0;
  size_t n_head = 0;
  size_t context_length = 0;  // n_positions: the longest sequence the model takes
  size_t vocab_size = 0;
  int32_t eos_token_id = -1;
  size_t parameter_count = 0;
  Device device = Device::kCpu;
  std::string source;     // the directory, or e.g. "gpt2 initialized from seed 0"
  std::string weights;    // the weight matrices' type: "f32", "bf16", "f16" or "int8"
  std::string kv_type;    // the KV cache's: "f32", "bf16" or "f16"
  std::string gemm_math;  // the products': "fp32", "tf32" or "bf16"
};

// How a model is held (docs/library.md, "Weight types").
struct LoadOptions {
  // The weight matrices (wte and every linear layer) as "f32", "bf16", "f16" or "int8"
  // (converted at load; int8: symmetric, one scale per 32 inputs, docs/formats.md). Empty: as the
  // checkpoint stores them (a bf16/f16/int8 checkpoint keeps its type), random weights f32.
  std::string weights;
  std::string kv_type = "f32";  // the KV cache: "f32", "bf16" or "f16"
  // The matrix products' math: "fp32" (exact FP32); on CUDA "tf32" or "bf16" (tensor cores,
  // inputs rounded); on the CPU "bf16" for bf16 weights where it has AMX or AVX512_BF16 (inputs
  // rounded to bf16; a CPU without them, or other weights, is kUnsupported naming why).
  std::string gemm_math = "fp32";
  // progress(bytes done, bytes in all), called on the calling thread as the weights are read,
  // converted or drawn (a front end's progress bar); may be empty.
  using Progress = std::function<void(size_t done, size_t total)>;
  Progress progress;
};

class EAGERLM_API Model {
 public:
  // A Hugging Face GPT-2 directory: config.json plus model.safetensors (or shards with
  // model.safetensors.index.json), in float32, float16 or bfloat16; its tokenizer files if it has
  // any, else GPT-2's built-in vocabulary. Throws kIo, kInvalidFile, kUnsupported, kOutOfMemory.
  static Model load(const std::string& directory, Device device = Device::kCpu);
  // The same with weight and cache types; an unknown name is kInvalidArgument naming the field.
  static Model load(const std::string& directory, Device device, const LoadOptions& options);

  // Fresh random weights (Hugging Face's initialization, drawn with JAX's random numbers: the same
  // seed gives the same weights as `eagerlm init`) for a preset name ("gpt2", "gpt2-medium",
  // "gpt2-large", "gpt2-xl") or a config.json path (or a directory holding one). GPT-2's tokenizer.
  static Model initialize(const std::string& preset_or_config, uint64_t seed = 0, Device device = Device::kCpu);
  static Model initialize(const std::string& preset_or_config, uint64_t seed, Device device,
                          const LoadOptions& options);

  // The same for a config given as values.
  static Model initialize(const ModelConfig& config, uint64_t seed = 0, Device device = Device::kCpu);
  static Model initialize(const ModelConfig& config, uint64_t seed, Device device, const LoadOptions& options);

  // A model over weights in the caller's memory, with GPT-2's tokenizer. The tensors are checked
  // as a checkpoint's are (docs/formats.md): names as in a checkpoint (with the "transformer."
  // prefix or without, all alike; lm_head.weight only if equal to wte.weight), every parameter
  // present with the shape the config implies, dtype F32, F16 or BF16, `bytes` matching, nothing
  // unexpected; otherwise Error kInvalidArgument naming the tensor and what was expected.
  // On the CPU, F32 tensors whose data is 4-byte aligned are used in place, not copied: that
  // memory must stay alive and unchanged until the library releases `keep_alive` (its owner),
  // which it does when the last Model and Generator over these weights are gone. Other tensors
  // are converted or copied once, as are all of them for Device::kCuda. (So the linear layers are
  // read as given: load and initialize copy float32 layers into the kernels' panels on CPUs with
  // AVX2 or AVX-512, where one sequence decodes 1.15-1.7x faster.)
  static Model from_parameters(const ModelConfig& config, const std::vector<TensorView>& tensors,
                               std::shared_ptr<const void> keep_alive, Device device = Device::kCpu);

  // load and initialize reporting progress only (LoadOptions::progress).
  using LoadProgress = LoadOptions::Progress;
  static Model load(const std::string& directory, Device device, const LoadProgress& progress);
  static Model initialize(const std::string& preset_or_config, uint64_t seed, Device device,
                          const LoadProgress& progress);

  Model(const Model&) = default;  // copies share the weights; there is no empty Model
  Model& operator=(const Model&) = default;

  ModelInfo info() const;

  // Token ids of UTF-8 text. "<|endoftext|>" in the text is ordinary text unless parse_special.
  // Throws kInvalidArgument for invalid UTF-8.
  std::vector<int32_t> tokenize(std::string_view text, bool parse_special = false) const;
  // The bytes the ids stand for, concatenated: not necessarily valid UTF-8 when a character is
  // split across tokens. Throws kInvalidArgument for an id outside the vocabulary.
  std::string detokenize(const std::vector<int32_t>& ids) const;

  // Next-token logits (before any softmax) at every position of a sequence: ids.size() rows of
  // vocab_size floats, row-major; row t scores the token after ids[0..t]. Sequences are at most
  // context_length tokens long. Runs a fresh forward pass (its own cache), so it is safe to call
  // from several threads at once.
  std::vector<float> logits(const std::vector<int32_t>& ids) const;
  // The same for several sequences of any lengths, run together as one batch.
  std::vector<std::vector<float>> logits_batch(const std::vector<std::vector<int32_t>>& batch) const;

  // Log-probabilities of a sequence's tokens, each given the ones before it (as CTranslate2's
  // score_batch): ids.size() - 1 values, value i being log p(ids[i + 1] | ids[0..i]) under the
  // model's distribution (natural log, no sampling filters); a one-token sequence gives none.
  // Sequences are 1 to context_length tokens. Computed without forming the logits (the output
  // head is fused with the log-softmax), by a fresh forward pass per call, so it is safe to call
  // from several threads at once. Throws kInvalidArgument for an empty or too long sequence or an
  // id outside the vocabulary.
  std::vector<float> score(const std::vector<int32_t>& ids) const;
  // The same for several sequences of any lengths, run together in batches.
  std::vector<std::vector<float>> score_batch(const std::vector<std::vector<int32_t>>& batch) const;

  struct Impl;

 private:
  explicit Model(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
  friend class Generator;
  friend class Engine;
};

}  // namespace eagerlm
