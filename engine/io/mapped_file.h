// A read-only memory map of one whole regular file. Checkpoints are mapped rather than read so
// that tensors can be used in place (or copied once to their device) without a second host copy.
// Opening refuses directories, FIFOs and devices without blocking on them, because `-m` may name
// anything. Out of scope (bad-inputs row 30): a file truncated by someone else while it is mapped
// raises SIGBUS on access; we do not guard against concurrent modification.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace eagerlm::io {

class MappedFile {
 public:
  // Maps `path` (following symlinks). Throws kIo naming the path if it is missing, unreadable,
  // or not a regular file. An empty file maps to size() == 0 with a valid, non-null data().
  static std::shared_ptr<MappedFile> open(const std::string& path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, const unsigned char* data, size_t size, bool mapped)
      : path_(std::move(path)), data_(data), size_(size), mapped_(mapped) {}

  std::string path_;
  const unsigned char* data_;
  size_t size_;
  bool mapped_;  // false for empty files, which mmap cannot map
};

// The whole contents of a small file (a config, a tokenizer file), opened as MappedFile::open
// does (never blocking on a FIFO). Throws kIo as open does, and kInvalidFile naming the file, its
// size and the limit when it holds more than `max_bytes`.
std::string read_file_limited(const std::string& path, size_t max_bytes);

}  // namespace eagerlm::io
