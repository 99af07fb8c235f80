// write_safetensors -> SafetensorsFile round trips on random data and awkward shapes, plus the
// writer's layout checked by an independent parse of the raw bytes in this file (header length,
// space padding to 8 bytes, __metadata__ first, tensor order, contiguous aligned offsets).
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "engine/io/safetensors_reader.h"
#include "engine/io/safetensors_writer.h"
#include "test/io/io_test_util.h"

namespace eagerlm::io {
using namespace eagerlm::io::test;

namespace {

struct Owned {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

std::vector<Owned> random_tensors(std::mt19937& rng) {
  const std::vector<std::vector<int64_t>> shapes = {{},        {0},          {1},      {7},   {3, 0, 2},
                                                    {2, 3, 5}, {1, 1, 1, 1}, {13, 17}, {5, 1}};
  const DType dtypes[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kI32};
  std::vector<Owned> tensors;
  int i = 0;
  for (DType dtype : dtypes)
    for (const auto& shape : shapes) {
      int64_t numel = 1;
      for (int64_t d : shape) numel *= d;
      std::string bytes(size_t(numel) * dtype_size(dtype), '\0');
      for (char& c : bytes) c = char(rng());
      // Names deliberately not in the file's order, so the writer has to sort them.
      tensors.push_back({"t" + std::to_string((i * 7) % 36) + "." + dtype_name(dtype), dtype, shape, bytes});
      ++i;
    }
  return tensors;
}

std::vector<TensorToWrite> views(const std::vector<Owned>& tensors) {
  std::vector<TensorToWrite> v;
  for (const Owned& t : tensors) v.push_back({t.name, t.dtype, t.shape, t.bytes.data()});
  return v;
}

// Independent statement of the order: F32, I32, BF16, F16 (the reference's), then by name.
int expected_rank(const std::string& dtype) {
  if (dtype == "F32") return 0;
  if (dtype == "I32") return 1;
  if (dtype == "BF16") return 2;
  return 3;
}

}  // namespace

TEST_CASE("safetensors round trip preserves names, dtypes, shapes and bytes", "[io][safetensors]") {
  TempDir dir;
  std::mt19937 rng(Catch::rngSeed());
  const std::vector<Owned> tensors = random_tensors(rng);
  const std::map<std::string, std::string> metadata = {{"source", "test"}, {"unicode", "\xC3\xA9\xE2\x9C\x93"}};
  write_safetensors(dir / "m.safetensors", views(tensors), metadata);

  const SafetensorsFile file = SafetensorsFile::open(dir / "m.safetensors");
  REQUIRE(file.tensors().size() == tensors.size());
  for (const Owned& t : tensors) {
    INFO(t.name);
    const TensorEntry* e = file.find(t.name);
    REQUIRE(e != nullptr);
    CHECK(e->dtype_name == dtype_name(t.dtype));
    if (t.dtype == DType::kI32)
      CHECK(!e->dtype.has_value());  // I32 is valid in a file but not a compute type
    else
      CHECK(e->dtype == t.dtype);
    CHECK(e->shape == t.shape);
    CHECK(e->byte_size() == t.bytes.size());
    CHECK(e->numel() * dtype_size(t.dtype) == t.bytes.size());
    CHECK(std::string(static_cast<const char*>(e->data), e->byte_size()) == t.bytes);
    CHECK(static_cast<const unsigned char*>(e->data) == file.mapping()->data() + 8 + file.header_bytes() + e->begin);
  }
  CHECK(file.find("absent") == nullptr);
  CHECK(file.metadata() ==
        std::map<std::string, std::string>{{"format", "pt"}, {"source", "test"}, {"unicode", "\xC3\xA9\xE2\x9C\x93"}});
  CHECK(file.path() == dir / "m.safetensors");
}

TEST_CASE("safetensors writer layout matches the format's conventions", "[io][safetensors]") {
  TempDir dir;
  std::mt19937 rng(Catch::rngSeed());
  const std::vector<Owned> tensors = random_tensors(rng);
  write_safetensors(dir / "m.safetensors", views(tensors));
  const std::string bytes = read_file(dir / "m.safetensors");

  REQUIRE(bytes.size() >= 8);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | uint8_t(bytes[size_t(i)]);
  REQUIRE(8 + n <= bytes.size());
  CHECK(n % 8 == 0);
  const std::string header = bytes.substr(8, n);
  const size_t close = header.find_last_of('}');
  REQUIRE(close != std::string::npos);
  CHECK(header.size() - close - 1 < 8);
  CHECK(header.find_first_not_of(' ', close + 1) == std::string::npos);
  CHECK(header.rfind("{\"__metadata__\":{\"format\":\"pt\"}", 0) == 0);

  const nlohmann::json j = nlohmann::json::parse(header);
  struct Placed {
    std::string name, dtype;
    uint64_t begin, end;
  };
  std::vector<Placed> placed;
  for (const auto& [name, v] : j.items())
    if (name != "__metadata__") placed.push_back({name, v["dtype"], v["data_offsets"][0], v["data_offsets"][1]});
  REQUIRE(placed.size() == tensors.size());
  std::sort(placed.begin(), placed.end(),
            [](const Placed& a, const Placed& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  std::vector<Owned> expected = tensors;
  std::sort(expected.begin(), expected.end(), [](const Owned& a, const Owned& b) {
    const int ra = expected_rank(dtype_name(a.dtype)), rb = expected_rank(dtype_name(b.dtype));
    return ra != rb ? ra < rb : a.name < b.name;
  });
  uint64_t offset = 0;
  for (size_t i = 0; i < placed.size(); ++i) {
    INFO(placed[i].name);
    CHECK(placed[i].name == expected[i].name);
    CHECK(placed[i].begin == offset);
    CHECK(placed[i].begin % dtype_size(expected[i].dtype) == 0);  // aligned within the section
    CHECK(bytes.substr(8 + n + placed[i].begin, placed[i].end - placed[i].begin) == expected[i].bytes);
    offset = placed[i].end;
  }
  CHECK(8 + n + offset == bytes.size());
}

TEST_CASE("safetensors writer handles empty tensor lists, progress and replacement", "[io][safetensors]") {
  TempDir dir;
  SECTION("no tensors") {
    write_safetensors(dir / "e.safetensors", {});
    const SafetensorsFile file = SafetensorsFile::open(dir / "e.safetensors");
    CHECK(file.tensors().empty());
    CHECK(file.metadata() == std::map<std::string, std::string>{{"format", "pt"}});
    CHECK(file.header_bytes() % 8 == 0);
  }
  SECTION("progress is monotonic and ends at the file size; the file replaces the old one") {
    write_file(dir / "p.safetensors", "old contents");
    const std::vector<float> values(1000, 1.5f);
    std::vector<std::pair<uint64_t, uint64_t>> calls;
    write_safetensors(dir / "p.safetensors", {{"w", DType::kF32, {10, 100}, values.data()}}, {},
                      [&](uint64_t done, uint64_t total) { calls.emplace_back(done, total); });
    const uint64_t size = read_file(dir / "p.safetensors").size();
    REQUIRE(!calls.empty());
    for (size_t i = 0; i < calls.size(); ++i) {
      CHECK(calls[i].second == size);
      if (i) CHECK(calls[i].first >= calls[i - 1].first);
    }
    CHECK(calls.back().first == size);
    CHECK(SafetensorsFile::open(dir / "p.safetensors").find("w") != nullptr);
    CHECK(!std::ifstream(dir / "p.safetensors.tmp").good());
  }
  SECTION("metadata may replace the format key") {
    write_safetensors(dir / "f.safetensors", {}, {{"format", "np"}});
    CHECK(SafetensorsFile::open(dir / "f.safetensors").metadata().at("format") == "np");
  }
}

TEST_CASE("safetensors writer rejects bad tensors and unwritable paths", "[io][safetensors]") {
  TempDir dir;
  const float x[2] = {1, 2};
  const auto bad = [&](std::vector<TensorToWrite> t) {
    return error_message([&] { write_safetensors(dir / "bad.safetensors", t); }, ErrorCode::kInvalidArgument);
  };
  CHECK_THAT(bad({{"a", DType::kF32, {2}, x}, {"a", DType::kF32, {2}, x}}), Catch::Contains("duplicate tensor 'a'"));
  CHECK_THAT(bad({{"__metadata__", DType::kF32, {2}, x}}), Catch::Contains("reserved"));
  CHECK_THAT(bad({{"", DType::kF32, {2}, x}}), Catch::Contains("empty name"));
  CHECK_THAT(bad({{"a", DType::kF32, {-1}, x}}), Catch::Contains("negative dimension"));
  CHECK_THAT(bad({{"a", DType::kF32, {int64_t(1) << 62, 8}, x}}), Catch::Contains("too large"));
  CHECK_THAT(bad({{"a", DType::kF32, {2}, nullptr}}), Catch::Contains("no data"));
  CHECK_THAT(bad({{"bad\xff", DType::kF32, {2}, x}}), Catch::Contains("not UTF-8"));
  CHECK(!std::ifstream(dir / "bad.safetensors").good());

  const std::string m = error_message(
      [&] {
        write_safetensors(dir / "no/such/dir/x.safetensors", {{"a", DType::kF32, {2}, x}});
      },
      ErrorCode::kIo);
  // The temporary is created beside the final file (atomic_file.h); the message names where.
  CHECK_THAT(m, Catch::Contains("no/such/dir") && Catch::Contains("No such file"));
}

}  // namespace eagerlm::io
