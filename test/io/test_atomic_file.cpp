// The one writer (engine/io/atomic_file.h): a finished write replaces the file at once; a failed
// one (a full disk, simulated with RLIMIT_FSIZE in a child process) leaves the previous file and
// no temporary; a symbolic link planted under the old fixed temporary name is never written
// through; stale temporaries are recognised and removed.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "engine/io/atomic_file.h"
#include "test/io/io_test_util.h"

namespace eagerlm::io {
namespace {

using test::read_file;
using test::run_in_child;
using test::TempDir;
using test::write_file;

size_t count_entries(const TempDir& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++n;
  return n;
}

TEST_CASE("atomic writes replace the file whole and leave nothing else", "[io][atomic]") {
  TempDir dir;
  write_file_atomically(dir / "f", "first");
  CHECK(read_file(dir / "f") == "first");
  write_file_atomically(dir / "f", "second, longer");
  CHECK(read_file(dir / "f") == "second, longer");
  CHECK(count_entries(dir) == 1);
}

TEST_CASE("a write that fails midway leaves the previous file and no temporary", "[io][atomic]") {
  TempDir dir;
  write_file_atomically(dir / "model", "the old model");
  // The disk "fills" at 4 KiB: writes past it fail with EFBIG (SIGXFSZ ignored), like ENOSPC.
  const std::string report = run_in_child(
      [&] {
        ::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{4096, 4096};
        ::setrlimit(RLIMIT_FSIZE, &limit);
        write_file_atomically(dir / "model", std::string(1 << 20, 'x'));
      },
      10.0);
  CHECK_THAT(report, Catch::StartsWith("error: ") && Catch::Contains("model"));
  CHECK(read_file(dir / "model") == "the old model");
  CHECK(count_entries(dir) == 1);
}

TEST_CASE("a symbolic link planted where a temporary could go is never written through", "[io][atomic]") {
  TempDir dir, elsewhere;
  write_file(elsewhere / "victim", "untouched");
  // The old writer used the fixed name <file>.tmp; the new one makes a fresh name with O_EXCL.
  std::filesystem::create_symlink(elsewhere / "victim", dir / "model.safetensors.tmp");
  write_file_atomically(dir / "model.safetensors", "new");
  CHECK(read_file(elsewhere / "victim") == "untouched");
  CHECK(read_file(dir / "model.safetensors") == "new");
}

TEST_CASE("stale temporaries are recognised and removed", "[io][atomic]") {
  TempDir dir;
  std::string temp_name;
  {
    AtomicFile file(dir / "config.json");
    file.write("partial", 7);
    temp_name = std::filesystem::path(file.temporary_path()).filename().string();
    CHECK(is_eagerlm_temporary(temp_name));
    // A kill here would leave the temporary: simulate it by copying it aside.
    std::filesystem::copy_file(file.temporary_path(), dir / (".config.json.eagerlm-abcdefghij"));
  }  // not committed: the destructor removes its own temporary
  CHECK(!std::filesystem::exists(dir / temp_name));
  CHECK(!std::filesystem::exists(dir / "config.json"));
  CHECK(is_eagerlm_temporary(".config.json.eagerlm-abcdefghij"));
  CHECK(!is_eagerlm_temporary("config.json"));
  CHECK(!is_eagerlm_temporary(".eagerlm-abcdefghij"));
  CHECK(!is_eagerlm_temporary("model.safetensors.tmp"));
  write_file(dir / "keep.txt", "mine");
  remove_stale_temporaries(dir.str());
  CHECK(count_entries(dir) == 1);
  CHECK(std::filesystem::exists(dir / "keep.txt"));
}

}  // namespace
}  // namespace eagerlm::io
