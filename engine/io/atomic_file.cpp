#include "engine/io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "engine/core/error.h"

namespace eagerlm::io {

namespace {

constexpr const char* kMarker = ".eagerlm-";
constexpr size_t kSuffixLength = 10;
constexpr size_t kMaxWriteBytes = size_t(64) << 20;

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : slash == 0 ? std::string("/") : path.substr(0, slash);
}

std::string file_name_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string random_suffix() {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t base = std::random_device{}() * 0x9e3779b97f4a7c15ull ^ uint64_t(::getpid());
  uint64_t x = base + counter.fetch_add(1) * 0xbf58476d1ce4e5b9ull;
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string s;
  for (size_t i = 0; i < kSuffixLength; ++i) {
    s += kChars[x % 36];
    x = x / 36 ^ (x << 7);
  }
  return s;
}

void sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the rename itself succeeded; durability is best effort here
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

AtomicFile::AtomicFile(std::string final_path) : final_(std::move(final_path)) {
  const std::string dir = directory_of(final_), name = file_name_of(final_);
  for (int attempt = 0; attempt < 16 && fd_ < 0; ++attempt) {
    temp_ = dir + "/." + name + kMarker + random_suffix();
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0 && errno != EEXIST) fail("create a temporary file in " + dir);
  }
  if (fd_ < 0) fail("create a temporary file in " + dir);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_.c_str());
}

void AtomicFile::fail(const std::string& action) const {
  const int err = errno;
  throw_error(ErrorCode::kIo, "cannot " + action + ": " + std::strerror(err) +
                                  (err == ENOSPC || err == EFBIG ? " (" + final_ + " was left as it was)" : ""));
}

void AtomicFile::write(const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, std::min(bytes, kMaxWriteBytes));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      fail("write " + temp_);
    }
    p += n;
    bytes -= size_t(n);
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0) fail("flush " + temp_);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("close " + temp_);
  if (::rename(temp_.c_str(), final_.c_str()) != 0) fail("rename " + temp_ + " to " + final_);
  committed_ = true;
  sync_directory(directory_of(final_));
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  AtomicFile file(path);
  file.write(bytes.data(), bytes.size());
  file.commit();
}

bool is_eagerlm_temporary(std::string_view name) {
  const size_t marker = name.rfind(kMarker);
  return name.size() > 1 && name[0] == '.' && marker != std::string_view::npos && marker > 1 &&
         name.size() - marker - std::strlen(kMarker) == kSuffixLength;
}

void remove_stale_temporaries(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (is_eagerlm_temporary(entry.path().filename().string())) std::filesystem::remove(entry.path(), ec);
  }
}

}  // namespace eagerlm::io
