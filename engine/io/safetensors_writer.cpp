// write_safetensors: lay out the header, then stream the tensors through an AtomicFile in bounded
// chunks (so progress can be reported).
#include "engine/io/safetensors_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/core/error.h"
#include "engine/core/text.h"
#include "engine/core/utf8.h"
#include "engine/io/atomic_file.h"

namespace eagerlm::io {
namespace {

constexpr uint64_t kChunkBytes = uint64_t(64) << 20;

[[noreturn]] void bad_argument(const std::string& path, const std::string& message) {
  throw_error(ErrorCode::kInvalidArgument, "writing " + path + ": " + message);
}

std::string json_string(const std::string& s) { return nlohmann::json(s).dump(); }

// Position of a dtype in the reference implementation's Dtype enum, which is ordered by
// alignment (BOOL, U8, ..., F16, BF16, I32, U32, F32, F64, ...). Sorting by it, descending, puts
// larger alignments first and breaks ties between equal sizes exactly as the reference does, so
// the same tensors give byte-identical files.
int reference_dtype_rank(DType t) {
  switch (t) {
    case DType::kI8: return 2;
    case DType::kF16: return 7;
    case DType::kBF16: return 8;
    case DType::kI32: return 9;
    case DType::kF32: return 11;
  }
  return 0;
}

struct PlannedTensor {
  const TensorToWrite* tensor;
  uint64_t begin, end;
};

// Checks every tensor and returns them in file order with their offsets.
std::vector<PlannedTensor> plan_layout(const std::string& path, const std::vector<TensorToWrite>& tensors) {
  std::set<std::string> names;
  std::vector<PlannedTensor> plan;
  for (const TensorToWrite& t : tensors) {
    if (t.name.empty()) bad_argument(path, "a tensor has an empty name");
    if (t.name == "__metadata__") bad_argument(path, "'__metadata__' is reserved, not a tensor name");
    if (!utf8::is_valid(t.name)) bad_argument(path, "tensor name " + quoted_text(t.name) + " is not UTF-8");
    if (!names.insert(t.name).second) bad_argument(path, "duplicate tensor " + quoted_text(t.name));
    for (int64_t d : t.shape)
      if (d < 0) bad_argument(path, "tensor " + quoted_text(t.name) + " has a negative dimension");
    const bool empty = std::find(t.shape.begin(), t.shape.end(), 0) != t.shape.end();
    uint64_t bytes = empty ? 0 : dtype_size(t.dtype);
    for (int64_t d : t.shape)
      if (!empty && __builtin_mul_overflow(bytes, uint64_t(d), &bytes))
        bad_argument(path, "tensor " + quoted_text(t.name) + " is too large");
    if (bytes > 0 && t.data == nullptr) bad_argument(path, "tensor " + quoted_text(t.name) + " has no data");
    plan.push_back({&t, 0, bytes});
  }
  std::stable_sort(plan.begin(), plan.end(), [](const PlannedTensor& a, const PlannedTensor& b) {
    const int ra = reference_dtype_rank(a.tensor->dtype), rb = reference_dtype_rank(b.tensor->dtype);
    return ra != rb ? ra > rb : a.tensor->name < b.tensor->name;
  });
  uint64_t offset = 0;
  for (PlannedTensor& p : plan) {
    const uint64_t bytes = p.end;
    p.begin = offset;
    if (__builtin_add_overflow(offset, bytes, &offset)) bad_argument(path, "tensors are too large");
    p.end = offset;
  }
  return plan;
}

std::string header_json(const std::string& path, const std::vector<PlannedTensor>& plan,
                        const std::map<std::string, std::string>& metadata) {
  std::map<std::string, std::string> all_metadata{{"format", "pt"}};
  for (const auto& [key, value] : metadata) {
    if (!utf8::is_valid(key) || !utf8::is_valid(value))
      bad_argument(path, "metadata key " + quoted_text(key) + " or its value is not UTF-8");
    all_metadata[key] = value;
  }
  // Built by appending pieces (not `"literal" + string`, which trips a GCC 12 -Wrestrict bug).
  std::string json = "{\"__metadata__\":{";
  bool first = true;
  for (const auto& [key, value] : all_metadata) {
    if (!first) json += ',';
    json += json_string(key);
    json += ':';
    json += json_string(value);
    first = false;
  }
  json += '}';
  for (const PlannedTensor& p : plan) {
    json += ',';
    json += json_string(p.tensor->name);
    json += ":{\"dtype\":\"";
    json += dtype_name(p.tensor->dtype);
    json += "\",\"shape\":[";
    for (size_t i = 0; i < p.tensor->shape.size(); ++i) {
      if (i) json += ',';
      json += std::to_string(p.tensor->shape[i]);
    }
    json += "],\"data_offsets\":[";
    json += std::to_string(p.begin);
    json += ',';
    json += std::to_string(p.end);
    json += "]}";
  }
  json += "}";
  json.append((8 - json.size() % 8) % 8, ' ');  // data section starts 8-byte aligned
  return json;
}

}  // namespace

void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata,
                       const std::function<void(uint64_t, uint64_t)>& progress) {
  const std::vector<PlannedTensor> plan = plan_layout(path, tensors);
  const std::string header = header_json(path, plan, metadata);
  const uint64_t data_bytes = plan.empty() ? 0 : plan.back().end;
  const uint64_t total = 8 + header.size() + data_bytes;

  unsigned char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(uint64_t(header.size()) >> (8 * i));

  AtomicFile out(path);
  out.write(length, 8);
  out.write(header.data(), header.size());
  uint64_t written = 8 + header.size();
  if (progress) progress(written, total);
  for (const PlannedTensor& p : plan) {
    const char* src = static_cast<const char*>(p.tensor->data);
    for (uint64_t done = 0; done < p.end - p.begin;) {
      const uint64_t n = std::min(kChunkBytes, p.end - p.begin - done);
      out.write(src + done, n);
      done += n;
      written += n;
      if (progress) progress(written, total);
    }
  }
  out.commit();
}

}  // namespace eagerlm::io
