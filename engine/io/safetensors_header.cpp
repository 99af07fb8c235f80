// Per-entry validation of a safetensors header: the schema (exactly dtype, shape, data_offsets;
// `__metadata__` a flat object of strings), known dtypes, and byte counts computed with checked
// arithmetic so that a claimed shape can never wrap around to a small size.
#include "engine/io/safetensors_header.h"

#include <algorithm>
#include <limits>

#include "engine/core/error.h"
#include "engine/core/text.h"
#include "engine/io/safetensors_dtype.h"
#include "engine/io/strict_json.h"

namespace eagerlm::io {
namespace {

using Json = nlohmann::json;

// root object -> tensor object -> shape/offsets array: nothing legitimate nests deeper.
constexpr int kMaxHeaderDepth = 3;
constexpr size_t kMaxTensors = 1'000'000;  // gpt2-xl has 580; a 100 MB header could list ~2 million
constexpr size_t kMaxNameBytes = 4096;      // Hugging Face names are under 100 bytes

[[noreturn]] void fail(const std::string& message) { throw_error(ErrorCode::kInvalidFile, message); }

std::optional<uint64_t> non_negative_integer(const Json& j) {
  if (j.is_number_unsigned()) return j.get<uint64_t>();
  if (j.is_number_integer()) {
    const int64_t v = j.get<int64_t>();
    if (v >= 0) return uint64_t(v);
  }
  return std::nullopt;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::map<std::string, std::string> parse_metadata(const Json& j, const std::string& path) {
  if (!j.is_object())
    fail(path + ": header field '__metadata__' is a JSON " + j.type_name() + ", expected an object of strings");
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_string())
      fail(path + ": header field '__metadata__' key " + quoted_text(key) + " is a JSON " + value.type_name() +
           ", expected a string");
    metadata.emplace(key, value.get<std::string>());
  }
  return metadata;
}

TensorEntry parse_entry(const std::string& name, const Json& j, const std::string& path) {
  const std::string where = path + ": tensor " + quoted_text(name);
  if (!j.is_object())
    fail(where + " is a JSON " + j.type_name() + ", expected an object with dtype, shape and data_offsets");
  for (const auto& item : j.items())
    if (item.key() != "dtype" && item.key() != "shape" && item.key() != "data_offsets")
      fail(where + " has unexpected field " + quoted_text(item.key()) + " (expected exactly dtype, shape and data_offsets)");
  for (const char* field : {"dtype", "shape", "data_offsets"})
    if (!j.contains(field)) fail(where + " is missing field " + quoted_text(field));

  TensorEntry entry;
  entry.name = name;

  const Json& dtype = j["dtype"];
  if (!dtype.is_string()) fail(where + ": dtype is a JSON " + dtype.type_name() + ", expected a string");
  entry.dtype_name = dtype.get<std::string>();
  const std::optional<size_t> element_size = safetensors_dtype_size(entry.dtype_name);
  if (!element_size)
    fail(where + " has unsupported dtype " + quoted_text(entry.dtype_name) + " (supported: " + supported_safetensors_dtypes() +
         ")");
  entry.dtype = dtype_from_name(entry.dtype_name);

  const Json& shape = j["shape"];
  if (!shape.is_array()) fail(where + ": shape is a JSON " + shape.type_name() + ", expected an array");
  for (const Json& dim : shape) {
    const std::optional<uint64_t> d = non_negative_integer(dim);
    if (!d) fail(where + ": shape entry " + describe_json(dim) + " is not a non-negative integer");
    if (*d > uint64_t(std::numeric_limits<int64_t>::max()))
      fail(where + ": shape entry " + std::to_string(*d) + " overflows int64");
    entry.shape.push_back(int64_t(*d));
  }

  const Json& offsets = j["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2)
    fail(where + ": data_offsets is " + describe_json(offsets) + ", expected [begin, end]");
  const std::optional<uint64_t> begin = non_negative_integer(offsets[0]);
  const std::optional<uint64_t> end = non_negative_integer(offsets[1]);
  if (!begin || !end) fail(where + ": data_offsets are not two non-negative integers");
  if (*end < *begin)
    fail(where + ": data_offsets end " + std::to_string(*end) + " is before begin " + std::to_string(*begin));
  entry.begin = *begin;
  entry.end = *end;

  // A zero dimension makes the tensor empty whatever the others claim; otherwise every partial
  // product is a lower bound of the total, so checking each multiplication is exact.
  const bool empty = std::find(entry.shape.begin(), entry.shape.end(), 0) != entry.shape.end();
  uint64_t bytes = empty ? 0 : *element_size;
  for (int64_t dim : entry.shape)
    if (!empty && __builtin_mul_overflow(bytes, uint64_t(dim), &bytes))
      fail(where + ": shape " + shape_string(entry.shape) + " of " + entry.dtype_name +
           " overflows a 64-bit byte count");
  if (entry.end - entry.begin != bytes)
    fail(where + ": data_offsets [" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) + "] hold " +
         std::to_string(entry.end - entry.begin) + " bytes but shape " + shape_string(entry.shape) + " of " +
         entry.dtype_name + " needs " + std::to_string(bytes));
  return entry;
}

}  // namespace

SafetensorsHeader parse_safetensors_header(std::string_view json_text, const std::string& path) {
  std::vector<std::string> order;
  const Json root = parse_strict_json(json_text, path + ": header", kMaxHeaderDepth, &order);
  if (!root.is_object()) fail(path + ": header is a JSON " + std::string(root.type_name()) + ", expected an object");

  if (order.size() > kMaxTensors)
    fail(path + ": header lists " + std::to_string(order.size()) + " tensors, more than the " +
         std::to_string(kMaxTensors) + " eagerlm accepts in one file");
  SafetensorsHeader header;
  for (const std::string& key : order) {
    if (key.size() > kMaxNameBytes)
      fail(path + ": tensor name " + quoted_text(key) + " is " + std::to_string(key.size()) + " bytes, more than " +
           std::to_string(kMaxNameBytes));
    const Json& value = root.at(key);
    if (key == "__metadata__")
      header.metadata = parse_metadata(value, path);
    else
      header.tensors.push_back(parse_entry(key, value, path));
  }
  return header;
}

}  // namespace eagerlm::io
