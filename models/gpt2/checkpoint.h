// Loading a Hugging Face GPT-2 directory: config.json plus model.safetensors (or shards listed
// in model.safetensors.index.json). Every expected tensor must be present with the shape the
// config implies (Conv1D weights [in, out]; never transposed silently); names may carry the
// `transformer.` prefix (all or none); `lm_head.weight` may be absent (tied to wte) or equal to
// wte; the attention-mask buffers `*.attn.bias` / `*.attn.masked_bias` are ignored; anything
// else is an error naming the tensor and file. Weight matrices may also be int8 (I8 values and
// an F32 "<name>_scale" tensor each, as `eagerlm quantize` writes them: docs/formats.md).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/dtype.h"
#include "models/gpt2/config.h"
#include "models/gpt2/parameters.h"

namespace eagerlm::gpt2 {

struct CheckpointSummary {
  std::string dir;
  std::vector<std::string> files;  // config and weight files
  Config config;
  int64_t parameter_count = 0;
  size_t parameter_bytes = 0;  // as stored, int8 scales included
  std::vector<DType> dtypes;   // storage dtypes present (scales included), in DType order
  bool prefixed = false;       // names carry `transformer.`
  // The type the weight matrices share as stored (what a load keeps unless told otherwise), or
  // nullopt when they differ; and the int8 matrices' scale count.
  std::optional<WeightType> weights;
  int64_t scale_count = 0;
};

struct LoadedCheckpoint {
  Config config;
  // Tensors in the checkpoint's storage dtype, borrowing the memory-mapped files (kept alive by
  // the tensors themselves): nothing is read twice. int8 matrices come with their scales, each
  // checked finite and >= 0 (an error naming the scale tensor otherwise).
  ParameterTensors parameters;
  CheckpointSummary summary;
};

// Validates the directory, the config and every tensor's presence, dtype and shape.
CheckpointSummary inspect_checkpoint(const std::string& dir);
LoadedCheckpoint load_checkpoint(const std::string& dir);

// Writes a Hugging Face-compatible directory: config.json and model.safetensors with GPT-2's
// tensor names (bare, as GPT2LMHeadModel.from_pretrained accepts them) and Conv1D layouts.
// Tensors are written in their own dtype (device tensors are copied to the host first), int8
// matrices with their "<name>_scale" tensors (such a directory is eagerlm's own: Hugging Face
// does not read it); config.json's torch_dtype names the dtype of the first float tensor.
// `metadata` joins safetensors' {"format": "pt"}.
// The directory is created if missing; existing files of those names are replaced atomically
// (engine/io/atomic_file.h), model.safetensors first and config.json last, and temporaries an
// interrupted earlier write left there are removed.
void save_checkpoint(const std::string& dir, const Config& config, const ParameterTensors& parameters,
                     const std::function<void(uint64_t, uint64_t)>& progress = {},
                     const std::map<std::string, std::string>& metadata = {});

}  // namespace eagerlm::gpt2
