// A small in-process fuzz: random corruptions of a valid file (byte flips, digit edits in the
// header, truncation, extension, length-prefix changes). Each must either parse into entries
// that lie inside the mapping with consistent sizes, or be refused with kInvalidFile; anything
// else (another exception, a crash, an ASan/UBSan report) fails the suite.
#include <catch2/catch.hpp>
#include <random>

#include "engine/io/safetensors_reader.h"
#include "engine/io/safetensors_writer.h"
#include "test/io/io_test_util.h"

namespace eagerlm::io {
using namespace eagerlm::io::test;

namespace {

std::string mutate(std::string bytes, std::mt19937& rng) {
  const int edits = 1 + int(rng() % 3);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 6) {
      case 0:  // flip a byte anywhere
        if (!bytes.empty()) bytes[rng() % bytes.size()] ^= char(1 + rng() % 255);
        break;
      case 1: {  // replace a header digit with another digit, or with a structural character
        const size_t n = std::min<size_t>(bytes.size(), 200);
        if (n > 8) {
          const size_t at = 8 + rng() % (n - 8);
          const char choices[] = "0123456789-,[]{}\": \0x";
          bytes[at] = choices[rng() % (sizeof choices - 1)];
        }
        break;
      }
      case 2:  // truncate
        bytes.resize(rng() % (bytes.size() + 1));
        break;
      case 3:  // append junk
        bytes.append(size_t(1 + rng() % 16), char(rng()));
        break;
      case 4:  // nudge the length prefix
        if (bytes.size() >= 8) bytes[0] = char(uint8_t(bytes[0]) + int(rng() % 17) - 8);
        break;
      case 5:  // set a random high byte of the length prefix
        if (bytes.size() >= 8) bytes[1 + rng() % 7] = char(rng());
        break;
    }
  }
  return bytes;
}

}  // namespace

TEST_CASE("randomly corrupted files parse consistently or fail with kInvalidFile", "[io][safetensors][fuzz]") {
  TempDir dir;
  std::mt19937 rng(Catch::rngSeed());
  const std::vector<float> w(24, 0.25f);
  const std::vector<uint16_t> h(10, 0x3C00);
  write_safetensors(dir / "base.safetensors",
                    {{"w", DType::kF32, {4, 6}, w.data()},
                     {"h", DType::kF16, {10}, h.data()},
                     {"s", DType::kBF16, {}, h.data()},
                     {"z", DType::kF32, {0, 2}, nullptr}},
                    {{"note", "fuzz"}});
  const std::string base = read_file(dir / "base.safetensors");

  int accepted = 0, refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const std::string bytes = mutate(base, rng);
    write_file(dir / "m.safetensors", bytes);
    try {
      const SafetensorsFile file = SafetensorsFile::open(dir / "m.safetensors");
      const unsigned char* lo = file.mapping()->data();
      const unsigned char* hi = lo + file.mapping()->size();
      for (const TensorEntry& t : file.tensors()) {
        const auto* p = static_cast<const unsigned char*>(t.data);
        REQUIRE(p >= lo);
        REQUIRE(t.byte_size() <= uint64_t(hi - p));
      }
      ++accepted;
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kInvalidFile) FAIL("trial " << trial << ": " << e.what());
      ++refused;
    }
  }
  // Most corruptions must be caught; some (a flipped data byte, a changed metadata letter) are
  // still valid files.
  CHECK(refused > 1000);
  CHECK(accepted > 0);
}

}  // namespace eagerlm::io
