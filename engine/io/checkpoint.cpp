// Checkpoint::open: map each shard, then cross-check the shards against the index.
#include "engine/io/checkpoint.h"

#include "engine/core/error.h"
#include "engine/core/text.h"

namespace eagerlm::io {
namespace {

[[noreturn]] void fail(const std::string& message) { throw_error(ErrorCode::kInvalidFile, message); }

}  // namespace

Checkpoint Checkpoint::open(const ModelDirectory& md) {
  if (md.shard_paths.empty())
    throw_error(ErrorCode::kInvalidArgument, md.dir + ": model directory lists no weight files");
  Checkpoint ck;
  ck.directory_ = md;
  ck.files_.reserve(md.shard_paths.size());
  for (const std::string& path : md.shard_paths) ck.files_.push_back(SafetensorsFile::open(path));

  const bool sharded = !md.index_weight_map.empty();
  for (size_t f = 0; f < ck.files_.size(); ++f) {
    const SafetensorsFile& file = ck.files_[f];
    for (size_t i = 0; i < file.tensors().size(); ++i) {
      const TensorEntry& t = file.tensors()[i];
      const auto seen = ck.by_name_.find(t.name);
      if (seen != ck.by_name_.end())
        fail("tensor " + quoted_text(t.name) + " is present in two shards: " + md.shard_paths[seen->second.file] + " and " +
             file.path());
      if (sharded) {
        const auto listed = md.index_weight_map.find(t.name);
        if (listed == md.index_weight_map.end())
          fail(file.path() + ": tensor " + quoted_text(t.name) + " is not listed in " + md.index_path);
        if (listed->second != f)
          fail(file.path() + ": tensor " + quoted_text(t.name) + " is here, but " + md.index_path + " lists it in " +
               md.shard_paths.at(listed->second));
      }
      ck.by_name_.emplace(t.name, Location{f, i});
    }
  }
  for (const auto& [name, shard] : md.index_weight_map)
    if (!ck.by_name_.count(name))
      fail(md.index_path + " lists tensor " + quoted_text(name) + " in " + md.shard_paths.at(shard) + ", which lacks it");
  return ck;
}

const TensorEntry* Checkpoint::find(const std::string& name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &files_[it->second.file].tensors()[it->second.entry];
}

std::vector<const TensorEntry*> Checkpoint::all() const {
  std::vector<const TensorEntry*> result;
  for (const SafetensorsFile& file : files_)
    for (const TensorEntry& t : file.tensors()) result.push_back(&t);
  return result;
}

std::string Checkpoint::file_of(const std::string& name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? std::string() : files_[it->second.file].path();
}

}  // namespace eagerlm::io
