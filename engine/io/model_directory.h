// Finding the files of a Hugging Face model directory: config.json plus either model.safetensors
// or a sharded model.safetensors.index.json ({"metadata": {"total_size": N}, "weight_map":
// {tensor: shard file}}). Shard names come from a file we did not write, so they are checked to
// stay inside the directory before anything is opened. Pickle checkpoints are refused by name.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace eagerlm::io {

struct ModelDirectory {
  std::string dir;                                 // as given
  std::string config_path;                         // dir/config.json
  std::vector<std::string> shard_paths;            // dir-joined; one entry if not sharded
  std::map<std::string, size_t> index_weight_map;  // tensor -> shard index (empty if not sharded)
  std::string index_path;                          // dir/model.safetensors.index.json, or ""
  std::optional<uint64_t> index_total_size;        // metadata.total_size, informational only

  bool sharded() const { return !index_path.empty(); }
};

// Resolves `dir`. Prefers model.safetensors over the index when both exist (as transformers
// does). Throws kIo if `dir` is missing, unreadable or not a directory (a FIFO is refused without
// blocking); kInvalidFile, naming what was looked for, if the model files are missing, if only
// pickle weights (pytorch_model.bin, *.pt, *.pth, *.ckpt) are present, or if the index is
// malformed, names an absolute or `..` shard path, a shard that resolves (through symlinks)
// outside the directory, or a shard file that does not exist.
ModelDirectory resolve_model_directory(const std::string& dir);

}  // namespace eagerlm::io
