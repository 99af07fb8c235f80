// The one way eagerlm writes a file (checkpoints, configs, everything a command leaves behind):
// into a fresh temporary in the same directory, named .<name>.eagerlm-<random>, created with
// O_CREAT|O_EXCL|O_NOFOLLOW (so a file or symbolic link planted under that name is never written
// through), synced, then renamed over the final name, and the directory synced. A full disk, a
// signal or a crash therefore leaves the previous file or none, plus at worst a temporary of
// ours, which remove_stale_temporaries() cleans and no reader takes for a model file.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace eagerlm::io {

class AtomicFile {
 public:
  explicit AtomicFile(std::string final_path);  // throws Error(kIo) naming the directory
  ~AtomicFile();                                // removes the temporary unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t bytes);  // throws Error(kIo) (a full disk, ...)
  // Syncs the file, renames it over the final name and syncs the directory.
  void commit();
  const std::string& temporary_path() const { return temp_; }

 private:
  [[noreturn]] void fail(const std::string& action) const;
  std::string final_, temp_;
  int fd_ = -1;
  bool committed_ = false;
};

// Writes `bytes` to `path` through an AtomicFile.
void write_file_atomically(const std::string& path, std::string_view bytes);

// Whether a file name is one of AtomicFile's temporaries.
bool is_eagerlm_temporary(std::string_view filename);
// Removes the temporaries an interrupted write left in `dir` (errors are ignored: a temporary
// that cannot be removed is only clutter).
void remove_stale_temporaries(const std::string& dir);

}  // namespace eagerlm::io
