// All tensors of a model directory, across its shards, looked up by name. For a sharded model the
// index and the shards must agree exactly: every indexed tensor is in the shard the index names,
// and no tensor is unlisted or present twice, so that no reader can pick a different copy.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "engine/io/model_directory.h"
#include "engine/io/safetensors_reader.h"

namespace eagerlm::io {

class Checkpoint {
 public:
  // Opens and validates every shard (kIo / kInvalidFile naming the shard and tensor).
  static Checkpoint open(const ModelDirectory& md);

  const TensorEntry* find(const std::string& name) const;  // nullptr if absent
  std::vector<const TensorEntry*> all() const;             // shard order, then header order
  std::string file_of(const std::string& name) const;      // shard path, "" if absent

  const ModelDirectory& directory() const { return directory_; }
  const std::vector<SafetensorsFile>& files() const { return files_; }

 private:
  struct Location {  // indices, not pointers, so that copies of a Checkpoint stay valid
    size_t file;
    size_t entry;
  };

  ModelDirectory directory_;
  std::vector<SafetensorsFile> files_;
  std::unordered_map<std::string, Location> by_name_;
};

}  // namespace eagerlm::io
