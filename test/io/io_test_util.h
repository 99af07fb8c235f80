// Helpers for the io tests: a self-deleting temporary directory, raw file writing, handcrafted
// safetensors bytes, and running a call in a child process with a deadline (for FIFO tests, so a
// regression that blocks fails the test instead of hanging the suite).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "test/support/temp_dir.h"

namespace eagerlm::io::test {

using ::eagerlm::test::TempDir;

// Writes a new file (an existing one is unlinked first, not written through).
void write_file(const std::string& path, const std::string& bytes);
std::string read_file(const std::string& path);
void make_dirs(const std::string& path);  // like mkdir -p
void make_fifo(const std::string& path);
void make_symlink(const std::string& target, const std::string& link);

// 8-byte little-endian encoding of n.
std::string le64(uint64_t n);
// A safetensors file with the given header (written as-is, unpadded) and data section.
std::string safetensors_bytes(const std::string& header, const std::string& data = "");

// Bytes of `values` as stored in a file.
template <typename T>
std::string raw_bytes(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

// Runs `fn` and returns the message of the eagerlm::Error it throws, requiring `code`. Fails the
// test (via Catch) if it returns normally or throws something else.
std::string error_message(const std::function<void()>& fn, ErrorCode code);

// Runs `fn` in a forked child and returns "ok", "error: <message>" or "other exception" as the
// child reported it, or "timeout" if it did not finish within `seconds` (the child is killed).
std::string run_in_child(const std::function<void()>& fn, double seconds);

}  // namespace eagerlm::io::test
