// Reading safetensors files: a memory map plus a header that is validated completely before any
// tensor is handed out, so that every TensorEntry's bytes lie inside the file and match its dtype
// and shape. Layout: u64 little-endian header length N, N bytes of UTF-8 JSON
// ({name: {dtype, shape, data_offsets:[begin,end]}, "__metadata__": {str: str}}), then the data
// section, whose offsets are relative to its start and must tile it exactly.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/core/dtype.h"
#include "engine/io/mapped_file.h"

namespace eagerlm::io {

// The largest header we accept (the reference implementation's MAX_HEADER_SIZE).
constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

struct TensorEntry {
  std::string name;
  std::string dtype_name;       // as in the header, e.g. "F32"
  std::optional<DType> dtype;   // set for F32/F16/BF16/I8, the types eagerlm stores weights in
  std::vector<int64_t> shape;   // [] for a scalar
  uint64_t begin = 0, end = 0;  // byte offsets relative to the data section
  const void* data = nullptr;   // points into the mapping; not necessarily aligned

  uint64_t byte_size() const { return end - begin; }
  uint64_t numel() const;  // product of shape (1 for a scalar)
};

class SafetensorsFile {
 public:
  // Maps and validates the whole file. Throws kIo if it cannot be opened, kInvalidFile (naming
  // the file and the tensor or key) if it is malformed in any way.
  static SafetensorsFile open(const std::string& path);
  // The same, from an existing map.
  static SafetensorsFile parse(std::shared_ptr<MappedFile> file);

  const std::vector<TensorEntry>& tensors() const { return tensors_; }  // in header order
  const TensorEntry* find(const std::string& name) const;               // nullptr if absent
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::string& path() const { return file_->path(); }
  const std::shared_ptr<MappedFile>& mapping() const { return file_; }
  uint64_t header_bytes() const { return header_bytes_; }  // N, the JSON length incl. padding

 private:
  SafetensorsFile() = default;

  std::shared_ptr<MappedFile> file_;
  std::vector<TensorEntry> tensors_;
  std::unordered_map<std::string, size_t> index_;
  std::map<std::string, std::string> metadata_;
  uint64_t header_bytes_ = 0;
};

}  // namespace eagerlm::io
