// Index parsing and shard path containment. Names are checked lexically first (absolute, `..`)
// so that a hostile index is refused before any file it names is touched; symlinks are then
// resolved with realpath and the result must stay under the allowed root.
#include "engine/io/shard_index.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "engine/core/error.h"
#include "engine/core/text.h"
#include "engine/core/utf8.h"
#include "engine/io/mapped_file.h"
#include "engine/io/safetensors_reader.h"
#include "engine/io/strict_json.h"

namespace eagerlm::io {
namespace {

using Json = nlohmann::json;

// Containers nest two levels in a real index; extra keys some tools add may nest a bit more.
constexpr int kMaxIndexDepth = 16;

[[noreturn]] void fail(const std::string& message) { throw_error(ErrorCode::kInvalidFile, message); }

std::optional<std::string> real_path(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (!resolved) return std::nullopt;
  std::string result(resolved);
  std::free(resolved);
  return result;
}

bool is_within(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path == root ||
         (path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/');
}

std::string parent_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

ShardIndex read_shard_index(const std::string& index_path) {
  const std::shared_ptr<MappedFile> file = MappedFile::open(index_path);
  if (file->size() > kMaxSafetensorsHeaderBytes)
    fail(index_path + ": index is " + std::to_string(file->size()) + " bytes, the limit is " +
         std::to_string(kMaxSafetensorsHeaderBytes));
  const std::string_view text(reinterpret_cast<const char*>(file->data()), file->size());
  if (const size_t bad = utf8::first_invalid_offset(text); bad != std::string_view::npos)
    fail(index_path + ": not valid UTF-8 (at byte " + std::to_string(bad) + ")");
  const Json root = parse_strict_json(text, index_path, kMaxIndexDepth);
  if (!root.is_object()) fail(index_path + ": expected a JSON object");

  ShardIndex index;
  if (root.contains("metadata")) {
    const Json& metadata = root["metadata"];
    if (!metadata.is_object()) fail(index_path + ": 'metadata' is not an object");
    if (metadata.contains("total_size")) {
      const Json& total = metadata["total_size"];
      if (total.is_number_unsigned())
        index.total_size = total.get<uint64_t>();
      else
        fail(index_path + ": 'metadata.total_size' is " + describe_json(total) + ", expected a non-negative integer");
    }
  }
  if (!root.contains("weight_map")) fail(index_path + ": missing 'weight_map'");
  const Json& weight_map = root["weight_map"];
  if (!weight_map.is_object()) fail(index_path + ": 'weight_map' is not an object");
  if (weight_map.empty()) fail(index_path + ": 'weight_map' lists no tensors");
  for (const auto& [tensor, shard] : weight_map.items()) {
    if (!shard.is_string())
      fail(index_path + ": 'weight_map' entry for tensor " + quoted_text(tensor) + " is a JSON " + shard.type_name() +
           ", expected a shard file name");
    index.weight_map.emplace(tensor, shard.get<std::string>());
  }
  return index;
}

static std::string shard_context(const std::string& shard, const std::string& tensor, const std::string& index_path) {
  return index_path + ": shard " + quoted_text(shard) + " (listed for tensor " + quoted_text(tensor) + ")";
}

void check_shard_name(const std::string& shard, const std::string& tensor, const std::string& index_path) {
  const std::string where = shard_context(shard, tensor, index_path);
  if (shard.empty()) fail(index_path + ": empty shard name for tensor " + quoted_text(tensor));
  if (shard.find('\0') != std::string::npos) fail(where + " contains a NUL character");
  if (shard.front() == '/') fail(where + " is an absolute path; shards must be relative to the model directory");
  for (size_t start = 0; start <= shard.size();) {
    const size_t slash = std::min(shard.find('/', start), shard.size());
    if (shard.compare(start, slash - start, "..") == 0 && slash - start == 2)
      fail(where + " contains '..'; shards must stay inside the model directory");
    start = slash + 1;
  }
}

std::string locate_shard(const std::string& dir, const std::string& allowed_root, const std::string& shard,
                         const std::string& tensor, const std::string& index_path) {
  const std::string where = shard_context(shard, tensor, index_path);
  const std::string path = (dir.empty() || dir.back() == '/' ? dir : dir + "/") + shard;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    // `path` ends in the index's own text: quoted, escaped and cut like every name from a file.
    if (err == ENOENT) fail(where + " is missing: no file " + quoted_text(path, 160));
    throw_error(ErrorCode::kIo, where + ": cannot access " + quoted_text(path, 160) + ": " + std::strerror(err));
  }
  const std::optional<std::string> real = real_path(path);
  if (!real) throw_error(ErrorCode::kIo, where + ": cannot resolve " + quoted_text(path, 160));
  if (!is_within(*real, allowed_root))
    fail(where + " resolves to " + quoted_text(*real, 160) + ", outside the model directory " + allowed_root);
  if (!S_ISREG(st.st_mode)) fail(where + ": " + quoted_text(path, 160) + " is not a regular file");
  return path;
}

std::string shard_root(const std::string& dir) {
  const std::optional<std::string> real = real_path(dir);
  if (!real) throw_error(ErrorCode::kIo, "cannot resolve model directory " + dir);
  const std::string parent = parent_of(*real);
  if (base_name(parent) == "snapshots") {
    const std::string repo = parent_of(parent);
    if (is_directory(repo + "/blobs")) return repo;
  }
  return *real;
}

}  // namespace eagerlm::io
