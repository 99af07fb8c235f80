// A table of handcrafted malformed safetensors files, one or more per row of
// shared/docs/bad-inputs.md (rows 1-12), each written to disk and opened. Every one must be
// refused with kInvalidFile and a message that names the file and contains the expected words.
// Control rows that are valid make sure the helpers themselves produce readable files.
#include <catch2/catch.hpp>

#include "engine/io/safetensors_reader.h"
#include "test/io/io_test_util.h"

namespace eagerlm::io {
using namespace eagerlm::io::test;

namespace {

struct BadFile {
  std::string row;       // bad-inputs.md row
  std::string what;      // what is wrong
  std::string bytes;     // the whole file
  std::string expected;  // substring of the error message
};

// One tensor entry as JSON text.
std::string entry(const std::string& name, const std::string& dtype, const std::string& shape, uint64_t begin,
                  uint64_t end) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[" +
         std::to_string(begin) + "," + std::to_string(end) + "]}";
}

std::string object(const std::string& body) { return "{" + body + "}"; }

const std::string kEightBytes(8, '\x11');
const std::string kA = entry("a", "F32", "[2]", 0, 8);  // a valid 8-byte tensor

std::vector<BadFile> bad_files() {
  using std::string;
  return {
      // 1: shorter than the 8-byte length prefix.
      {"1", "empty file", "", "header too small"},
      {"1", "5 bytes", "\x01\x02\x03\x04\x05", "header too small"},
      {"1", "7 bytes", string(7, '\0'), "header too small"},
      // 2: a header length past the 100 MB limit, with no allocation attempted.
      {"2", "length 0xFFFFFF0000000000", le64(0xFFFFFF0000000000ull) + "{}", "header too large"},
      {"2", "length 2^64-1", le64(~0ull), "header too large"},
      {"2", "length 100,000,001", le64(100000001) + "{}", "header too large"},
      // 3: a header length past the end of the file.
      {"3", "length beyond the file", le64(100) + string(50, ' '), "invalid header length"},
      {"3", "length one past the file", le64(9) + "{}      ", "invalid header length"},
      // 4: not UTF-8.
      {"4", "0xFF byte", safetensors_bytes("{\"a\xff\":1}"), "not valid UTF-8"},
      {"4", "overlong '/'", safetensors_bytes("{\"\xc0\xaf\":1}"), "not valid UTF-8"},
      {"4", "encoded surrogate", safetensors_bytes("{\"\xed\xa0\x80\":1}"), "not valid UTF-8"},
      {"4", "truncated sequence", safetensors_bytes("{}\xe2\x82"), "not valid UTF-8"},
      // 5: not JSON, not an object, or bytes after the object other than JSON whitespace.
      {"5", "empty header", safetensors_bytes(""), "not valid JSON"},
      {"5", "not JSON", safetensors_bytes("hello!!!"), "not valid JSON"},
      {"5", "unterminated object", safetensors_bytes("{\"a\":"), "not valid JSON"},
      {"5", "an array", safetensors_bytes("[1, 2]  "), "expected an object"},
      {"5", "a string", safetensors_bytes("\"str\"   "), "expected an object"},
      {"5", "NUL padding", safetensors_bytes("{}" + string(6, '\0')), "trailing bytes"},
      {"5", "garbage after the object", safetensors_bytes("{} xyz  "), "trailing bytes"},
      {"5", "a second object", safetensors_bytes("{}{}    "), "trailing bytes"},
      {"5", "comment", safetensors_bytes("{}//x    "), "trailing bytes"},
      // 6: duplicate keys (nlohmann would silently keep one).
      {"6", "duplicate tensor", safetensors_bytes(object(kA + "," + kA), string(8, '\0')), "duplicate key 'a'"},
      {"6", "duplicate field",
       safetensors_bytes("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,8]}}",
                         kEightBytes),
       "duplicate key 'dtype' under 'a'"},
      {"6", "duplicate __metadata__", safetensors_bytes("{\"__metadata__\":{},\"__metadata__\":{}}"),
       "duplicate key '__metadata__'"},
      {"6", "duplicate metadata key", safetensors_bytes("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}"),
       "duplicate key 'k' under '__metadata__'"},
      // 7: schema: __metadata__ a flat object of strings; entries exactly dtype/shape/offsets.
      {"7", "metadata value not a string", safetensors_bytes("{\"__metadata__\":{\"k\":1}}"),
       "'__metadata__' key 'k' is a JSON number"},
      {"7", "metadata value an object", safetensors_bytes("{\"__metadata__\":{\"k\":{\"x\":\"y\"}}}"),
       "'__metadata__' key 'k' is a JSON object"},
      {"7", "metadata not an object", safetensors_bytes("{\"__metadata__\":\"pt\"}"),
       "'__metadata__' is a JSON string"},
      {"7", "entry not an object", safetensors_bytes("{\"a\":5}"), "tensor 'a' is a JSON number"},
      {"7", "extra field",
       safetensors_bytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":1}}", kEightBytes),
       "tensor 'a' has unexpected field 'x'"},
      {"7", "missing data_offsets", safetensors_bytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", kEightBytes),
       "tensor 'a' is missing field 'data_offsets'"},
      {"7", "missing dtype", safetensors_bytes("{\"a\":{\"shape\":[2],\"data_offsets\":[0,8]}}", kEightBytes),
       "tensor 'a' is missing field 'dtype'"},
      {"7", "dtype a number",
       safetensors_bytes("{\"a\":{\"dtype\":1,\"shape\":[2],\"data_offsets\":[0,8]}}", kEightBytes),
       "dtype is a JSON number"},
      {"7", "shape a string", safetensors_bytes(object(entry("a", "F32", "\"2\"", 0, 8)), kEightBytes),
       "shape is a JSON string"},
      {"7", "negative shape", safetensors_bytes(object(entry("a", "F32", "[-2]", 0, 8)), kEightBytes),
       "shape entry -2 is not a non-negative integer"},
      {"7", "fractional shape", safetensors_bytes(object(entry("a", "F32", "[2.0]", 0, 8)), kEightBytes),
       "is not a non-negative integer"},
      {"7", "nested shape", safetensors_bytes(object(entry("a", "F32", "[[2]]", 0, 8)), kEightBytes), "nests deeper"},
      {"7", "three offsets",
       safetensors_bytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8,8]}}", kEightBytes),
       "expected [begin, end]"},
      {"7", "negative offset", safetensors_bytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[-8,-8]}}"),
       "not two non-negative integers"},
      {"7", "string offset",
       safetensors_bytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[\"0\",8]}}", kEightBytes),
       "not two non-negative integers"},
      {"7", "offset beyond u64",
       safetensors_bytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":["
                         "18446744073709551616,18446744073709551616]}}"),
       "not two non-negative integers"},
      // 8: dtypes outside the standard, whole-byte set.
      {"8", "F8_E4M3", safetensors_bytes(object(entry("a", "F8_E4M3", "[8]", 0, 8)), kEightBytes),
       "tensor 'a' has unsupported dtype 'F8_E4M3'"},
      {"8", "X", safetensors_bytes(object(entry("a", "X", "[8]", 0, 8)), kEightBytes), "unsupported dtype 'X'"},
      {"8", "lowercase f32", safetensors_bytes(object(entry("a", "f32", "[2]", 0, 8)), kEightBytes),
       "unsupported dtype 'f32'"},
      // 9: offsets that do not tile the data section.
      {"9", "first tensor not at 0", safetensors_bytes(object(entry("a", "F32", "[2]", 4, 12)), string(12, '\0')),
       "tensor 'a' has invalid data_offsets: begins at 4, leaving a hole"},
      {"9", "hole between tensors",
       safetensors_bytes(object(kA + "," + entry("b", "F32", "[1]", 12, 16)), string(16, '\0')),
       "tensor 'b' has invalid data_offsets: begins at 12, leaving a hole after tensor 'a'"},
      {"9", "overlap", safetensors_bytes(object(kA + "," + entry("b", "F32", "[2]", 4, 12)), string(12, '\0')),
       "tensor 'b' has invalid data_offsets: begins at 4, overlapping"},
      {"9", "same range twice", safetensors_bytes(object(kA + "," + entry("b", "F32", "[2]", 0, 8)), kEightBytes),
       "invalid data_offsets"},
      {"9", "end before begin", safetensors_bytes(object(entry("a", "F32", "[0]", 8, 4)), kEightBytes),
       "tensor 'a': data_offsets end 4 is before begin 8"},
      // 10: byte counts that overflow.
      {"10", "[2^62, 8] of F32",
       safetensors_bytes(object(entry("a", "F32", "[4611686018427387904,8]", 0, 8)), kEightBytes),
       "overflows a 64-bit byte count"},
      {"10", "[2^32, 2^32]", safetensors_bytes(object(entry("a", "U8", "[4294967296,4294967296]", 0, 8)), kEightBytes),
       "overflows a 64-bit byte count"},
      {"10", "dimension 2^63", safetensors_bytes(object(entry("a", "U8", "[9223372036854775808]", 0, 8)), kEightBytes),
       "overflows int64"},
      // 11: offsets that disagree with dtype and shape.
      {"11", "too few bytes", safetensors_bytes(object(entry("a", "F32", "[2]", 0, 4)), string(4, '\0')), "needs 8"},
      {"11", "too many bytes", safetensors_bytes(object(entry("a", "F16", "[2]", 0, 8)), kEightBytes), "needs 4"},
      {"11", "scalar with no bytes", safetensors_bytes(object(entry("a", "F32", "[]", 0, 0))), "needs 4"},
      // 12: data section longer or shorter than the tensors.
      {"12", "trailing bytes", safetensors_bytes(object(kA), kEightBytes + "tail"),
       "4 trailing bytes after the last tensor"},
      {"12", "trailing bytes, no tensors", safetensors_bytes("{}", "x"), "1 trailing bytes"},
      {"12", "truncated data", safetensors_bytes(object(kA), "\x01\x02\x03"), "data section is truncated"},
      {"12", "truncated, no data at all", safetensors_bytes(object(kA)), "data section is truncated"},
  };
}

}  // namespace

TEST_CASE("every malformed safetensors file is refused with a clear error", "[io][safetensors][malformed]") {
  TempDir dir;
  const std::vector<BadFile> files = bad_files();
  for (size_t i = 0; i < files.size(); ++i) {
    const BadFile& bad = files[i];
    const std::string path = dir / ("bad" + std::to_string(i) + ".safetensors");
    write_file(path, bad.bytes);
    INFO("bad-inputs row " << bad.row << ": " << bad.what);
    const std::string message = error_message([&] { SafetensorsFile::open(path); }, ErrorCode::kInvalidFile);
    CHECK_THAT(message, Catch::Contains(bad.expected));
    CHECK_THAT(message, Catch::StartsWith(path));
  }
}

TEST_CASE("valid edge cases that the malformed table borders on are accepted", "[io][safetensors][malformed]") {
  TempDir dir;
  const auto open_bytes = [&](const std::string& bytes) {
    write_file(dir / "ok.safetensors", bytes);
    return SafetensorsFile::open(dir / "ok.safetensors");
  };
  SECTION("whitespace padding of every allowed kind, and leading whitespace") {
    CHECK(open_bytes(safetensors_bytes(" \n{}\t\r\n ")).tensors().empty());
  }
  SECTION("a minimal valid tensor") {
    const SafetensorsFile f = open_bytes(safetensors_bytes(object(kA), kEightBytes));
    REQUIRE(f.tensors().size() == 1);
    CHECK(f.tensors()[0].shape == std::vector<int64_t>{2});
  }
  SECTION("zero-size tensors may share an offset with each other and with a neighbour") {
    const SafetensorsFile f =
        open_bytes(safetensors_bytes(object(entry("z1", "F32", "[0]", 8, 8) + "," + kA + "," +
                                            entry("z2", "BF16", "[3,0]", 8, 8) + "," + entry("z0", "U8", "[0]", 0, 0)),
                                     kEightBytes));
    CHECK(f.tensors().size() == 4);
    // Header order is kept, not offset order.
    CHECK(f.tensors()[0].name == "z1");
    CHECK(f.tensors()[3].name == "z0");
  }
  SECTION("a huge dimension times a zero dimension is an empty tensor") {
    const SafetensorsFile f = open_bytes(safetensors_bytes(object(entry("a", "F32", "[9223372036854775807,0]", 0, 0))));
    CHECK(f.tensors()[0].byte_size() == 0);
  }
  SECTION("escaped and non-ASCII tensor names") {
    const SafetensorsFile f = open_bytes(safetensors_bytes(
        object(entry("caf\xc3\xa9", "F32", "[2]", 0, 8) + "," + entry("q\\\"", "U8", "[1]", 8, 9)), kEightBytes + "z"));
    CHECK(f.find("caf\xc3\xa9") != nullptr);
    CHECK(f.find("q\"") != nullptr);
  }
  SECTION("-0 is accepted as a zero offset or dimension") {
    const SafetensorsFile f =
        open_bytes(safetensors_bytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[-0],\"data_offsets\":[-0,0]}}"));
    CHECK(f.tensors()[0].shape == std::vector<int64_t>{0});
  }
}

}  // namespace eagerlm::io
