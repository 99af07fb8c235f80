// Interoperability with the reference implementation: test/io/data/*.safetensors were written by
// the upstream `safetensors` Python package (see make_reference_fixtures.py, which spells out the
// same tensors as this file). The reader must decode them, and the writer must reproduce
// compute.safetensors byte for byte from the same tensors.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "engine/io/safetensors_reader.h"
#include "engine/io/safetensors_writer.h"
#include "test/io/io_test_util.h"

namespace eagerlm::io {
using namespace eagerlm::io::test;

namespace {

const std::string kDataDir = std::string(EAGERLM_SOURCE_DIR) + "/test/io/data/";

template <typename T>
std::vector<T> values_of(const TensorEntry& e) {
  std::vector<T> v(e.byte_size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), e.data, e.byte_size());
  return v;
}

// The tensors of make_reference_fixtures.py's `compute` dictionary.
const std::vector<float> kWte = {0.5f, -1.25f, 3.0f, 1e-3f, -0.0f, 65504.0f};
const std::vector<uint16_t> kBias = {0x3C00, 0xC000, 0x7BFF, 0x0001};
const std::vector<uint16_t> kScale = {0x3FC0};
const std::vector<int32_t> kPos = {7, -9};
const std::vector<uint16_t> kOdd = {0x4049, 0xC2F7, 0x0000};

}  // namespace

TEST_CASE("reader decodes a file written by the reference implementation", "[io][safetensors]") {
  const SafetensorsFile file = SafetensorsFile::open(kDataDir + "compute.safetensors");
  CHECK(file.metadata() == std::map<std::string, std::string>{{"format", "pt"}});
  REQUIRE(file.tensors().size() == 6);

  const TensorEntry* wte = file.find("wte");
  REQUIRE(wte);
  CHECK(wte->dtype == DType::kF32);
  CHECK(wte->shape == std::vector<int64_t>{3, 2});
  CHECK(values_of<float>(*wte) == kWte);
  CHECK(std::signbit(values_of<float>(*wte)[4]));

  const TensorEntry* bias = file.find("h.0.ln.bias");
  REQUIRE(bias);
  CHECK(bias->dtype == DType::kF16);
  CHECK(values_of<uint16_t>(*bias) == kBias);
  // 1, -2, the largest half, the smallest subnormal half.
  std::vector<float> f(4);
  convert_to_f32(bias->data, DType::kF16, f.data(), 4);
  CHECK(f == std::vector<float>{1.0f, -2.0f, 65504.0f, 0x1p-24f});

  const TensorEntry* scale = file.find("scale");
  REQUIRE(scale);
  CHECK(scale->dtype == DType::kBF16);
  CHECK(scale->shape.empty());
  CHECK(scale->numel() == 1);
  CHECK(values_of<uint16_t>(*scale) == kScale);

  const TensorEntry* empty = file.find("empty");
  REQUIRE(empty);
  CHECK(empty->shape == std::vector<int64_t>{0, 3});
  CHECK(empty->byte_size() == 0);

  const TensorEntry* pos = file.find("pos");
  REQUIRE(pos);
  CHECK(pos->dtype_name == "I32");
  CHECK(!pos->dtype.has_value());
  CHECK(values_of<int32_t>(*pos) == kPos);

  const TensorEntry* odd = file.find("a.odd");
  REQUIRE(odd);
  CHECK(odd->shape == std::vector<int64_t>{1, 3, 1});
  CHECK(values_of<uint16_t>(*odd) == kOdd);
}

TEST_CASE("reader accepts the other standard dtypes without a compute type", "[io][safetensors]") {
  const SafetensorsFile file = SafetensorsFile::open(kDataDir + "mixed.safetensors");
  CHECK(file.metadata().empty());
  REQUIRE(file.tensors().size() == 5);
  const TensorEntry* big = file.find("big");
  REQUIRE(big);
  CHECK(big->dtype_name == "I64");
  CHECK(!big->dtype);
  CHECK(values_of<int64_t>(*big) == std::vector<int64_t>{int64_t(1) << 40, -3});
  CHECK(values_of<uint8_t>(*file.find("bytes")) == std::vector<uint8_t>{0, 128, 255});
  CHECK(values_of<uint8_t>(*file.find("mask")) == std::vector<uint8_t>{1, 0});
  CHECK(values_of<double>(*file.find("double")) == std::vector<double>{3.25});
  CHECK(file.find("w")->dtype == DType::kF32);
  CHECK(values_of<float>(*file.find("w")) == std::vector<float>{1.0f, -2.0f});
}

TEST_CASE("writer output is byte-identical to the reference implementation's", "[io][safetensors]") {
  TempDir dir;
  // Given in an order different from the file's, as a Python dict would be.
  const std::vector<TensorToWrite> tensors = {
      {"wte", DType::kF32, {3, 2}, kWte.data()},  {"h.0.ln.bias", DType::kF16, {4}, kBias.data()},
      {"scale", DType::kBF16, {}, kScale.data()}, {"empty", DType::kF32, {0, 3}, nullptr},
      {"pos", DType::kI32, {2}, kPos.data()},     {"a.odd", DType::kBF16, {1, 3, 1}, kOdd.data()},
  };
  write_safetensors(dir / "ours.safetensors", tensors);
  CHECK(read_file(dir / "ours.safetensors") == read_file(kDataDir + "compute.safetensors"));
}

}  // namespace eagerlm::io
