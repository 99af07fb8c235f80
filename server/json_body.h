// Request bodies as JSON: parsed strictly (UTF-8, nesting at most kMaxJsonDepth deep, an object
// at the top), and read field by field with the type each field must have. Every failure is an
// ApiError 400 naming the field, so a client learns exactly what to fix.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/api_error.h"

namespace eagerlm::server {

inline constexpr int kMaxJsonDepth = 32;

// The body as a JSON object. Throws ApiError 400 for malformed JSON (saying where), nesting
// deeper than kMaxJsonDepth, or a top level that is not an object.
nlohmann::json parse_json_object(std::string_view body);

// Typed access to an object's fields. A field that is absent or null reads as "not given"
// (OpenAI's clients send null for unset options). Fields never read by the end are reported by
// reject_unknown(): OpenAI answers a misspelt option with an error, not with silence.
class Fields {
 public:
  Fields(const nlohmann::json& object, std::string prefix = {});

  const nlohmann::json* get(const std::string& name);  // null when absent or null

  std::optional<std::string> string(const std::string& name);
  std::optional<bool> boolean(const std::string& name);
  // Integers only (17, not 17.0 or "17"), within [min, max].
  std::optional<int64_t> integer(const std::string& name, int64_t min, int64_t max);
  std::optional<uint64_t> unsigned_integer(const std::string& name);
  // A number that a float holds (finite). Its range is the engine's to check (GenerateOptions is
  // validated at submit, naming the option): one rule, stated once.
  std::optional<float> real(const std::string& name);
  // Any finite number within [min, max]; `range` describes the interval in messages.
  std::optional<double> number(const std::string& name, double min, double max, const std::string& range);

  // Throws ApiError 400 naming the first field that was never read.
  void reject_unknown() const;

  // The name as messages give it: "stream_options.include_usage".
  std::string path(const std::string& name) const { return prefix_ + name; }

 private:
  const nlohmann::json& object_;
  std::string prefix_;
  std::set<std::string> read_;
};

// A JSON value's type as messages name it: "a string", "an integer", "null", ...
std::string json_type_name(const nlohmann::json& value);

}  // namespace eagerlm::server
