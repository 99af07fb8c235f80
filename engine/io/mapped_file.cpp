// MappedFile: stat first so that a FIFO or device is refused before open() could block on it,
// then open with O_NONBLOCK and check again on the descriptor (the path may have changed).
#include "engine/io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/core/error.h"

namespace eagerlm::io {
namespace {

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

[[noreturn]] void throw_errno(const std::string& path, const char* action, int err) {
  throw_error(ErrorCode::kIo, path + ": cannot " + action + ": " + std::strerror(err));
}

[[noreturn]] void throw_not_regular(const std::string& path, mode_t mode) {
  throw_error(ErrorCode::kIo, path + ": is " + file_kind(mode) + ", expected a regular file");
}

// Closes a descriptor on every exit path.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw_errno(path, "open", errno);
  if (!S_ISREG(st.st_mode)) throw_not_regular(path, st.st_mode);

  FdCloser fd{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (fd.fd < 0) throw_errno(path, "open", errno);
  if (::fstat(fd.fd, &st) != 0) throw_errno(path, "stat", errno);
  if (!S_ISREG(st.st_mode)) throw_not_regular(path, st.st_mode);
  if (st.st_size < 0) throw_error(ErrorCode::kIo, path + ": negative file size");

  const size_t size = size_t(st.st_size);
  if (size == 0) {
    static const unsigned char kEmpty[1] = {0};
    return std::shared_ptr<MappedFile>(new MappedFile(path, kEmpty, 0, false));
  }
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.fd, 0);
  if (p == MAP_FAILED) throw_errno(path, "memory-map", errno);
  return std::shared_ptr<MappedFile>(new MappedFile(path, static_cast<const unsigned char*>(p), size, true));
}

MappedFile::~MappedFile() {
  if (mapped_) ::munmap(const_cast<unsigned char*>(data_), size_);
}

std::string read_file_limited(const std::string& path, size_t max_bytes) {
  const std::shared_ptr<MappedFile> file = MappedFile::open(path);
  if (file->size() > max_bytes)
    throw_error(ErrorCode::kInvalidFile, path + ": " + std::to_string(file->size()) + " bytes, more than the " +
                                             std::to_string(max_bytes) + " such a file may hold");
  return std::string(reinterpret_cast<const char*>(file->data()), file->size());
}

}  // namespace eagerlm::io
