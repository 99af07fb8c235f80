// Implementation of the io test helpers (POSIX: mkdtemp, mkfifo, fork).
#include "test/io/io_test_util.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

namespace eagerlm::io::test {

void write_file(const std::string& path, const std::string& bytes) {
  // Replace rather than truncate: ext4 flushes a file truncated to zero on close, which made
  // thousands of rewrites take seconds.
  std::remove(path.c_str());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void make_dirs(const std::string& path) { std::filesystem::create_directories(path); }

void make_fifo(const std::string& path) {
  if (::mkfifo(path.c_str(), 0644) != 0) throw std::runtime_error("mkfifo failed: " + path);
}

void make_symlink(const std::string& target, const std::string& link) { std::filesystem::create_symlink(target, link); }

std::string le64(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[size_t(i)] = char((n >> (8 * i)) & 0xff);
  return s;
}

std::string safetensors_bytes(const std::string& header, const std::string& data) {
  return le64(header.size()) + header + data;
}

std::string error_message(const std::function<void()>& fn, ErrorCode code) {
  try {
    fn();
  } catch (const Error& e) {
    INFO("message: " << e.what());
    CHECK(error_code_name(e.code()) == std::string(error_code_name(code)));
    return e.what();
  } catch (const std::exception& e) {
    FAIL("expected eagerlm::Error, got std::exception: " << e.what());
  }
  FAIL("expected eagerlm::Error, but the call succeeded");
  return "";
}

std::string run_in_child(const std::function<void()>& fn, double seconds) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    std::string report;
    try {
      fn();
      report = "ok";
    } catch (const Error& e) {
      report = std::string("error: ") + e.what();
    } catch (...) {
      report = "other exception";
    }
    const ssize_t ignored = ::write(fds[1], report.data(), report.size());
    (void)ignored;
    ::_exit(0);
  }
  ::close(fds[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ::close(fds[0]);
      return "timeout";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::string report;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) report.append(buf, size_t(n));
  ::close(fds[0]);
  return report;
}

}  // namespace eagerlm::io::test
