// Internal: reading model.safetensors.index.json and turning its shard names into paths that are
// guaranteed to stay inside the model directory.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace eagerlm::io {

struct ShardIndex {
  std::map<std::string, std::string> weight_map;  // tensor -> shard name as written
  std::optional<uint64_t> total_size;
};

// Parses the index file (strict JSON, no duplicate keys). Throws kIo / kInvalidFile.
ShardIndex read_shard_index(const std::string& index_path);

// Rejects a shard name from the index at `index_path` (listed for `tensor`) that is empty,
// absolute or has a `..` component. Purely lexical: touches no file.
void check_shard_name(const std::string& shard, const std::string& tensor, const std::string& index_path);

// Returns dir/shard for a name that passed check_shard_name, after checking that it exists, is
// a regular file, and that its real path (symlinks resolved) lies under `allowed_root`.
std::string locate_shard(const std::string& dir, const std::string& allowed_root, const std::string& shard,
                         const std::string& tensor, const std::string& index_path);

// The real path under which a directory's shards must lie: the directory itself, or for a
// Hugging Face hub cache snapshot (<repo>/snapshots/<rev>, whose files are symlinks into
// <repo>/blobs) the repo folder.
std::string shard_root(const std::string& dir);

}  // namespace eagerlm::io
