// MappedFile: contents match what was written, empty files map, and anything that is not a
// regular file (directory, FIFO, device, missing path) is refused with kIo without blocking.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <random>

#include "engine/io/mapped_file.h"
#include "test/io/io_test_util.h"

namespace eagerlm::io {
using namespace eagerlm::io::test;

TEST_CASE("MappedFile maps exactly the bytes of a file", "[io][mapped_file]") {
  TempDir dir;
  std::mt19937 rng(Catch::rngSeed());
  std::string bytes(size_t(1 + rng() % 100000), '\0');
  for (char& c : bytes) c = char(rng());
  write_file(dir / "f.bin", bytes);
  const auto file = MappedFile::open(dir / "f.bin");
  REQUIRE(file->size() == bytes.size());
  CHECK(std::string(reinterpret_cast<const char*>(file->data()), file->size()) == bytes);
  CHECK(file->path() == dir / "f.bin");
}

TEST_CASE("MappedFile maps an empty file to size 0", "[io][mapped_file]") {
  TempDir dir;
  write_file(dir / "empty", "");
  const auto file = MappedFile::open(dir / "empty");
  CHECK(file->size() == 0);
  CHECK(file->data() != nullptr);
}

TEST_CASE("MappedFile refuses what is not a readable regular file", "[io][mapped_file]") {
  TempDir dir;
  SECTION("missing") {
    const std::string m = error_message([&] { MappedFile::open(dir / "nope"); }, ErrorCode::kIo);
    CHECK_THAT(m, Catch::Contains("nope") && Catch::Contains("No such file"));
  }
  SECTION("directory") {
    const std::string m = error_message([&] { MappedFile::open(dir.path()); }, ErrorCode::kIo);
    CHECK_THAT(m, Catch::Contains("is a directory"));
  }
  SECTION("character device") {
    const std::string m = error_message([&] { MappedFile::open("/dev/null"); }, ErrorCode::kIo);
    CHECK_THAT(m, Catch::Contains("/dev/null") && Catch::Contains("character device"));
  }
  SECTION("FIFO without a writer: refused promptly, not blocked on") {
    make_fifo(dir / "fifo");
    const std::string report = run_in_child([&] { MappedFile::open(dir / "fifo"); }, 5.0);
    CHECK_THAT(report, Catch::StartsWith("error: ") && Catch::Contains("is a FIFO"));
  }
  SECTION("symlink to a FIFO") {
    make_fifo(dir / "fifo");
    make_symlink(dir / "fifo", dir / "link");
    const std::string report = run_in_child([&] { MappedFile::open(dir / "link"); }, 5.0);
    CHECK_THAT(report, Catch::StartsWith("error: ") && Catch::Contains("is a FIFO"));
  }
  SECTION("unreadable (only checkable when not root)") {
    write_file(dir / "secret", "data");
    ::chmod((dir / "secret").c_str(), 0);
    if (::geteuid() == 0) {
      WARN("running as root: permission bits are not enforced, unreadable-file check skipped");
    } else {
      const std::string m = error_message([&] { MappedFile::open(dir / "secret"); }, ErrorCode::kIo);
      CHECK_THAT(m, Catch::Contains("Permission denied"));
    }
  }
}

}  // namespace eagerlm::io
