// resolve_model_directory: classify the path, find config and weights, and when there are none
// say what was looked for (and point pickle-only directories at a conversion instead).
#include "engine/io/model_directory.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "engine/core/error.h"
#include "engine/io/shard_index.h"

namespace eagerlm::io {
namespace {

constexpr const char* kConfig = "config.json";
constexpr const char* kWeights = "model.safetensors";
constexpr const char* kIndex = "model.safetensors.index.json";

std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

const char* kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a directory";
}

// True if dir/name exists as a regular file; false if absent; throws if it is something else.
bool has_regular_file(const std::string& dir, const char* name) {
  const std::string path = join(dir, name);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) return false;
    throw_error(ErrorCode::kIo, "cannot access " + path + ": " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode))
    throw_error(ErrorCode::kInvalidFile, path + " is " + (S_ISDIR(st.st_mode) ? "a directory" : kind_of(st.st_mode)) +
                                             ", expected a regular file");
  return true;
}

std::vector<std::string> list_directory(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (!d) {
    const int err = errno;
    throw_error(ErrorCode::kIo, "cannot list model directory " + dir + ": " + std::strerror(err));
  }
  while (const dirent* e = ::readdir(d)) names.emplace_back(e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

bool is_pickle_name(const std::string& name) {
  return ends_with(name, ".bin") || ends_with(name, ".pt") || ends_with(name, ".pth") || ends_with(name, ".ckpt") ||
         ends_with(name, ".pkl") || ends_with(name, ".bin.index.json");
}

// Called when neither model.safetensors nor its index exists: explain what is there instead.
[[noreturn]] void throw_no_weights(const std::string& dir, bool has_config) {
  std::vector<std::string> pickles, other_safetensors;
  for (const std::string& name : list_directory(dir)) {
    if (is_pickle_name(name)) pickles.push_back(name);
    if (ends_with(name, ".safetensors")) other_safetensors.push_back(name);
  }
  auto joined = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size() && i < 5; ++i) s += (i ? ", " : "") + v[i];
    return v.size() > 5 ? s + ", ..." : s;
  };
  if (!pickles.empty())
    throw_error(ErrorCode::kInvalidFile,
                dir + ": has only PyTorch pickle weights (" + joined(pickles) +
                    "); eagerlm never loads pickle files, which can run arbitrary code. Convert "
                    "the model to safetensors first (e.g. in Python: transformers' "
                    "from_pretrained(dir).save_pretrained(out, safe_serialization=True))");
  std::string message = dir + ": no model weights: looked for " + kWeights + " and " + kIndex;
  if (!has_config)
    message = dir + ": no model files: looked for " + std::string(kConfig) + ", " + kWeights + " and " + kIndex;
  if (!other_safetensors.empty())
    message += "; found " + joined(other_safetensors) + ", but the weights must be named " + kWeights +
               " (or be listed in " + kIndex + ")";
  throw_error(ErrorCode::kInvalidFile, message);
}

}  // namespace

ModelDirectory resolve_model_directory(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    const int err = errno;
    throw_error(ErrorCode::kIo, "model path " + dir + ": " + std::strerror(err));
  }
  if (!S_ISDIR(st.st_mode))
    throw_error(ErrorCode::kIo, "model path " + dir + " is " + kind_of(st.st_mode) + ", expected a directory with " +
                                    kConfig + " and " + kWeights);
  if (::access(dir.c_str(), R_OK | X_OK) != 0) {
    const int err = errno;
    throw_error(ErrorCode::kIo, "cannot read model directory " + dir + ": " + std::strerror(err));
  }

  ModelDirectory md;
  md.dir = dir;
  md.config_path = join(dir, kConfig);
  const bool has_config = has_regular_file(dir, kConfig);
  const bool has_weights = has_regular_file(dir, kWeights);
  const bool has_index = !has_weights && has_regular_file(dir, kIndex);
  if (!has_weights && !has_index) throw_no_weights(dir, has_config);
  if (!has_config)
    throw_error(ErrorCode::kInvalidFile,
                dir + ": missing " + kConfig + " (the model's hyperparameters), next to its weights");

  if (has_weights) {
    md.shard_paths.push_back(join(dir, kWeights));
    return md;
  }

  md.index_path = join(dir, kIndex);
  const ShardIndex index = read_shard_index(md.index_path);
  md.index_total_size = index.total_size;
  // Check every distinct shard name (first tensor listing it names it in messages), in name order.
  std::map<std::string, std::string> first_tensor_of_shard;
  for (const auto& [tensor, shard] : index.weight_map) first_tensor_of_shard.emplace(shard, tensor);
  for (const auto& [shard, tensor] : first_tensor_of_shard)
    check_shard_name(shard, tensor, md.index_path);  // all names, before touching any file
  const std::string root = shard_root(dir);
  std::map<std::string, size_t> shard_number;
  for (const auto& [shard, tensor] : first_tensor_of_shard) {
    shard_number.emplace(shard, md.shard_paths.size());
    md.shard_paths.push_back(locate_shard(dir, root, shard, tensor, md.index_path));
  }
  for (const auto& [tensor, shard] : index.weight_map) md.index_weight_map.emplace(tensor, shard_number.at(shard));
  return md;
}

}  // namespace eagerlm::io
