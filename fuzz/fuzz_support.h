// What every fuzz target shares: the rule (an input either parses or is refused with an
// eagerlm::Error; any other exception aborts, which libFuzzer reports as a finding, as it does a
// crash, a sanitizer report, a timeout or an allocation over -malloc_limit_mb), and a private
// scratch directory for targets whose parsers read files.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "engine/core/error.h"
#include "test/support/temp_dir.h"

namespace eagerlm::fuzz {

// Runs body(); an eagerlm::Error is a clean refusal, anything else a finding.
template <typename Body>
void expect_clean(Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    // A refusal must be one line: no file content may break it.
    const std::string_view message = e.what();
    if (message.empty() || message.find('\n') != std::string_view::npos) std::abort();
  } catch (...) {
    std::abort();
  }
}

// This process's scratch directory (created once; the files in it are rewritten per input;
// removed when the fuzzer exits normally): the tests' TempDir.
inline const std::string& scratch_dir() {
  static const test::TempDir scratch;
  static const std::string dir = scratch.str();
  return dir;
}

// Writes `bytes` as `name` in the scratch directory (replacing what was there) and returns the path.
inline std::string write_scratch(const std::string& name, std::string_view bytes) {
  const std::string path = scratch_dir() + "/" + name;
  ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) std::abort();
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) std::abort();
    done += size_t(n);
  }
  ::close(fd);
  return path;
}

inline void remove_scratch(const std::string& name) { ::unlink((scratch_dir() + "/" + name).c_str()); }

}  // namespace eagerlm::fuzz
