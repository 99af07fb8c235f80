// Internal: the one way eagerlm parses a JSON file (config.json, tokenizer.json, safetensors
// headers, shard indexes), stricter than nlohmann's defaults: nlohmann keeps one of two
// duplicate keys silently (a header or index with duplicate keys is ambiguous: two readers may
// disagree on which tensor is meant), takes a NUL byte for the end of its input, and nests
// without limit. No nlohmann exception leaves here: every failure is Error(kInvalidFile) naming
// the input. Not part of the public API: public headers never include nlohmann.
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

// A value from a file, described for a one-line message without printing all of it (and never
// recursively): "the string \"abc\"" (escaped, cut), "1.5", "true", "null", "an array of 3
// elements", "an object with 2 keys".
std::string describe_json(const nlohmann::json& value);

// nlohmann's exception text without its "[json.exception.<kind>.<id>] " prefix.
std::string json_error_text(const nlohmann::json::exception& e);

}  // namespace eagerlm::io
