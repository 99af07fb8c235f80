// Internal: turns a safetensors JSON header into tensor entries and metadata, checking each entry
// on its own (fields, types, dtype, shape, size arithmetic). Checks that involve the data section
// (contiguity, bounds) are the reader's. Split out so the reader stays about file framing.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/io/safetensors_reader.h"

namespace eagerlm::io {

struct SafetensorsHeader {
  std::vector<TensorEntry> tensors;  // header order; data pointers not yet set
  std::map<std::string, std::string> metadata;
};

// `json_text` is the header (already checked to be UTF-8); `path` names the file in messages.
SafetensorsHeader parse_safetensors_header(std::string_view json_text, const std::string& path);

}  // namespace eagerlm::io
