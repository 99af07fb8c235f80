// parse_strict_json: nlohmann's DOM parser plus a callback that tracks nesting to find duplicate
// keys, excess depth and the end of the root value (so trailing bytes get a clear message).
#include "engine/io/strict_json.h"

#include <cstdio>
#include <unordered_set>

#include "engine/core/error.h"
#include "engine/core/text.h"

namespace eagerlm::io {
namespace {

using Json = nlohmann::json;

struct Frame {
  bool is_object = false;
  std::unordered_set<std::string> keys;
};

std::string single_quoted(const std::string& s) { return quoted_text(s); }

}  // namespace

Json parse_strict_json(std::string_view text, const std::string& what, int max_depth,
                       std::vector<std::string>* top_level_keys) {
  std::vector<Frame> stack;
  std::string top_key;  // the current key of the root object, for messages about nested keys
  bool root_done = false;

  auto on_event = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) -> bool {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (int(stack.size()) >= max_depth)
          throw_error(ErrorCode::kInvalidFile, what + " nests deeper than " + std::to_string(max_depth) + " levels" +
                                                   (top_key.empty() ? "" : " under key " + single_quoted(top_key)));
        stack.push_back(Frame{event == Json::parse_event_t::object_start, {}});
        break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!stack.empty()) stack.pop_back();
        if (stack.empty()) root_done = true;
        break;
      case Json::parse_event_t::key: {
        const std::string& key = parsed.get_ref<const std::string&>();
        if (stack.empty() || !stack.back().is_object) break;
        if (!stack.back().keys.insert(key).second) {
          if (stack.size() == 1)
            throw_error(ErrorCode::kInvalidFile, what + " has duplicate key " + single_quoted(key));
          throw_error(ErrorCode::kInvalidFile,
                      what + " has duplicate key " + single_quoted(key) + " under " + single_quoted(top_key));
        }
        if (stack.size() == 1) {
          top_key = key;
          if (top_level_keys) top_level_keys->push_back(key);
        }
        break;
      }
      case Json::parse_event_t::value:
        if (stack.empty()) root_done = true;
        break;
    }
    return true;
  };

  // nlohmann treats a NUL byte as the end of its input, so "{}\0\0" would parse. A raw NUL is
  // never valid JSON: parse up to it, and report it as trailing bytes if the value was complete.
  const size_t nul = text.find('\0');
  const std::string_view json = text.substr(0, nul);
  const std::string nul_note =
      nul == std::string_view::npos ? "" : " (it contains a NUL byte at " + std::to_string(nul) + ")";
  try {
    Json result = Json::parse(json.data(), json.data() + json.size(), on_event,
                              /*allow_exceptions=*/true, /*ignore_comments=*/false);
    if (nul != std::string_view::npos)
      throw_error(ErrorCode::kInvalidFile, what + " has trailing bytes after the JSON value (byte " +
                                               std::to_string(nul) +
                                               " is 0x00); only spaces, tabs, CR and LF may pad it");
    return result;
  } catch (const Json::parse_error& e) {
    if (root_done) {
      std::string where;
      if (e.byte >= 1 && e.byte <= json.size()) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(json[e.byte - 1])));
        where = " (byte " + std::to_string(e.byte - 1) + " is " + hex + ")";
      }
      throw_error(ErrorCode::kInvalidFile, what + " has trailing bytes after the JSON value" + where +
                                               "; only spaces, tabs, CR and LF may pad it");
    }
    throw_error(ErrorCode::kInvalidFile, what + " is not valid JSON: " + json_error_text(e) + nul_note);
  } catch (const Json::exception& e) {
    throw_error(ErrorCode::kInvalidFile, what + " is not valid JSON: " + json_error_text(e) + nul_note);
  }
}

std::string json_error_text(const nlohmann::json::exception& e) {
  std::string text = e.what();
  if (text.rfind("[json.exception.", 0) == 0) {
    const size_t close = text.find("] ");
    if (close != std::string::npos) text.erase(0, close + 2);
  }
  return escape_for_message(text, 200);
}

std::string describe_json(const nlohmann::json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case Json::value_t::string: return "the string \"" + escape_for_message(v.get_ref<const std::string&>(), 40) + "\"";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: return v.dump();  // a scalar: short
    case Json::value_t::array: return "an array of " + std::to_string(v.size()) + " elements";
    case Json::value_t::object: return "an object with " + std::to_string(v.size()) + " keys";
    case Json::value_t::binary: return "binary data";
    case Json::value_t::discarded: return "nothing";
  }
  return "a value";
}

}  // namespace eagerlm::io
