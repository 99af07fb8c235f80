#include "server/json_body.h"

#include <cmath>
#include <limits>

namespace eagerlm::server {

namespace {

// nlohmann's parser keeps its own stack, but destroying and walking a value recurses: bound the
// nesting before parsing. Counts brackets outside strings.
void check_depth(std::string_view body) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : body) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw ApiError(400, "the request body nests JSON more than " + std::to_string(kMaxJsonDepth) + " levels deep");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

std::string describe(const nlohmann::json& v) {
  std::string text = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

}  // namespace

std::string json_type_name(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "an integer";
    case nlohmann::json::value_t::number_float: return "a number";
    default: return "an unsupported value";
  }
}

nlohmann::json parse_json_object(std::string_view body) {
  if (body.empty()) throw ApiError(400, "the request body is empty: expected a JSON object");
  check_depth(body);
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(body.begin(), body.end());
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() names the byte and what was expected; drop nlohmann's "[json.exception...]" tag.
    std::string what = e.what();
    const size_t tag = what.find("] ");
    if (tag != std::string::npos) what = what.substr(tag + 2);
    throw ApiError(400, "the request body is not valid JSON: " + what);
  } catch (const nlohmann::json::exception& e) {
    // out_of_range: a number beyond a double (1e309); found by fuzz/completion_request_fuzz.
    std::string what = e.what();
    const size_t tag = what.find("] ");
    if (tag != std::string::npos) what = what.substr(tag + 2);
    throw ApiError(400, "the request body holds a value JSON cannot represent here: " + what);
  }
  if (!value.is_object())
    throw ApiError(400, "the request body must be a JSON object, got " + json_type_name(value));
  return value;
}

Fields::Fields(const nlohmann::json& object, std::string prefix) : object_(object), prefix_(std::move(prefix)) {}

const nlohmann::json* Fields::get(const std::string& name) {
  read_.insert(name);
  const auto it = object_.find(name);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<std::string> Fields::string(const std::string& name) {
  const nlohmann::json* v = get(name);
  if (!v) return std::nullopt;
  if (!v->is_string()) throw invalid_field(path(name), path(name) + " must be a string, got " + json_type_name(*v));
  return v->get<std::string>();
}

std::optional<bool> Fields::boolean(const std::string& name) {
  const nlohmann::json* v = get(name);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) throw invalid_field(path(name), path(name) + " must be a boolean, got " + json_type_name(*v));
  return v->get<bool>();
}

std::optional<int64_t> Fields::integer(const std::string& name, int64_t min, int64_t max) {
  const nlohmann::json* v = get(name);
  if (!v) return std::nullopt;
  const std::string range = "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (!v->is_number_integer() && !v->is_number_unsigned())
    throw invalid_field(path(name), path(name) + " must be " + range + ", got " + json_type_name(*v));
  // Unsigned values beyond int64 are out of every range asked for here.
  if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(INT64_MAX))
    throw invalid_field(path(name), path(name) + " must be " + range + ", got " + describe(*v));
  const int64_t x = v->get<int64_t>();
  if (x < min || x > max) throw invalid_field(path(name), path(name) + " must be " + range + ", got " + describe(*v));
  return x;
}

std::optional<uint64_t> Fields::unsigned_integer(const std::string& name) {
  const nlohmann::json* v = get(name);
  if (!v) return std::nullopt;
  const bool ok = v->is_number_unsigned() || (v->is_number_integer() && v->get<int64_t>() >= 0);
  if (!ok)
    throw invalid_field(path(name), path(name) + " must be an integer in [0, 18446744073709551615], got " +
                                        (v->is_number_integer() ? describe(*v) : json_type_name(*v)));
  return v->get<uint64_t>();
}

std::optional<double> Fields::number(const std::string& name, double min, double max, const std::string& range) {
  const nlohmann::json* v = get(name);
  if (!v) return std::nullopt;
  if (!v->is_number()) throw invalid_field(path(name), path(name) + " must be a number in " + range + ", got " + json_type_name(*v));
  const double x = v->get<double>();
  if (!std::isfinite(x) || x < min || x > max)
    throw invalid_field(path(name), path(name) + " must be a number in " + range + ", got " + describe(*v));
  return x;
}

std::optional<float> Fields::real(const std::string& name) {
  const nlohmann::json* v = get(name);
  if (!v) return std::nullopt;
  if (!v->is_number()) throw invalid_field(path(name), path(name) + " must be a number, got " + json_type_name(*v));
  const double x = v->get<double>();
  if (!std::isfinite(x) || std::fabs(x) > double(std::numeric_limits<float>::max()))
    throw invalid_field(path(name), path(name) + " must be a finite number, got " + describe(*v));
  return float(x);
}

void Fields::reject_unknown() const {
  for (const auto& [key, value] : object_.items())
    if (!read_.count(key))
      // The name is the client's: escaped and cut (fuzz/completion_request_fuzz sent a newline).
      throw invalid_field(path(key), "unrecognized request argument supplied: " + client_text(path(key)));
}

}  // namespace eagerlm::server
