// Internal: JSON parsing for file headers, stricter than nlohmann's defaults. nlohmann keeps one
// of two duplicate keys silently; a safetensors header or index with duplicate keys is ambiguous
// (two readers may disagree on which tensor is meant), so duplicates are errors here. Not part of
// the public API: public headers never include nlohmann.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace eagerlm::io {

// Parses `text` as exactly one JSON value. `what` names the input in messages (e.g.
// "model.safetensors: header"). Throws kInvalidFile if the text is not JSON, has bytes after the
// value other than JSON whitespace (space, tab, LF, CR), repeats a key within one object, or
// nests containers deeper than `max_depth`. If `top_level_keys` is given it receives the keys of
// a top-level object in the order they appear (nlohmann's object type sorts them).
nlohmann::json parse_strict_json(std::string_view text, const std::string& what, int max_depth,
                                 std::vector<std::string>* top_level_keys = nullptr);

}  // namespace eagerlm::io
