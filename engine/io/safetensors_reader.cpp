// SafetensorsFile: file framing (header length, bounds, UTF-8) and the data-section checks that
// need all entries at once (offsets tile [0, data size) exactly, with no holes or overlaps).
// Nothing is allocated or read from a claimed length before it is checked against the file size.
#include "engine/io/safetensors_reader.h"

#include <algorithm>

#include "engine/core/error.h"
#include "engine/core/text.h"
#include "engine/core/utf8.h"
#include "engine/io/safetensors_header.h"

namespace eagerlm::io {
namespace {

[[noreturn]] void fail(const std::string& message) { throw_error(ErrorCode::kInvalidFile, message); }

uint64_t load_u64_le(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Offsets must tile the data section: sorted by (begin, end), each begins where the previous
// ended, and the last ends exactly at the end of the file.
void check_offsets(const std::vector<TensorEntry>& tensors, uint64_t data_size, const std::string& path) {
  std::vector<const TensorEntry*> sorted;
  sorted.reserve(tensors.size());
  for (const TensorEntry& t : tensors) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(), [](const TensorEntry* a, const TensorEntry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t expected = 0;
  const TensorEntry* previous = nullptr;
  for (const TensorEntry* t : sorted) {
    if (t->begin != expected) {
      const std::string after =
          previous ? " after tensor " + quoted_text(previous->name) + " ends at " + std::to_string(expected)
                   : " (the first tensor must start at 0)";
      fail(path + ": tensor " + quoted_text(t->name) + " has invalid data_offsets: begins at " +
           std::to_string(t->begin) + (t->begin > expected ? ", leaving a hole" : ", overlapping") + after);
    }
    expected = t->end;
    previous = t;
  }
  if (data_size > expected)
    fail(path + ": " + std::to_string(data_size - expected) +
         " trailing bytes after the last tensor's data (data section is " + std::to_string(data_size) +
         " bytes, tensors end at " + std::to_string(expected) + ")");
  if (data_size < expected)
    fail(path + ": data section is truncated: " + std::to_string(data_size) + " bytes, but tensor " +
         quoted_text(previous->name) + " ends at " + std::to_string(expected));
}

}  // namespace

uint64_t TensorEntry::numel() const {
  uint64_t n = 1;
  // Exact: with a zero dimension the result is 0 (unsigned wrap-around before it is harmless);
  // otherwise the product was checked against the byte count.
  for (int64_t d : shape) n *= uint64_t(d);
  return n;
}

SafetensorsFile SafetensorsFile::open(const std::string& path) { return parse(MappedFile::open(path)); }

SafetensorsFile SafetensorsFile::parse(std::shared_ptr<MappedFile> file) {
  if (!file) throw_error(ErrorCode::kInvalidArgument, "SafetensorsFile::parse: null file");
  const std::string& path = file->path();
  const uint64_t size = file->size();
  if (size < 8)
    fail(path + ": header too small: the file has " + std::to_string(size) +
         " bytes, a safetensors file starts with an 8-byte header length");
  const uint64_t n = load_u64_le(file->data());
  if (n > kMaxSafetensorsHeaderBytes)
    fail(path + ": header too large: it claims " + std::to_string(n) + " bytes, the limit is " +
         std::to_string(kMaxSafetensorsHeaderBytes));
  if (n > size - 8)
    fail(path + ": invalid header length: it claims " + std::to_string(n) + " bytes but the file has only " +
         std::to_string(size - 8) + " after the length");

  const std::string_view text(reinterpret_cast<const char*>(file->data() + 8), size_t(n));
  if (const size_t bad = utf8::first_invalid_offset(text); bad != std::string_view::npos)
    fail(path + ": header is not valid UTF-8 (at header byte " + std::to_string(bad) + ")");

  SafetensorsHeader header = parse_safetensors_header(text, path);
  const uint64_t data_size = size - 8 - n;
  check_offsets(header.tensors, data_size, path);

  SafetensorsFile result;
  result.file_ = std::move(file);
  result.header_bytes_ = n;
  result.metadata_ = std::move(header.metadata);
  result.tensors_ = std::move(header.tensors);
  const unsigned char* data_section = result.file_->data() + 8 + n;
  result.index_.reserve(result.tensors_.size());
  for (size_t i = 0; i < result.tensors_.size(); ++i) {
    TensorEntry& t = result.tensors_[i];
    t.data = data_section + t.begin;  // begin <= end <= data_size, checked above
    result.index_.emplace(t.name, i);
  }
  return result;
}

const TensorEntry* SafetensorsFile::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace eagerlm::io
