#include "server/api_error.h"

#include <nlohmann/json.hpp>

#include "eagerlm/error.hpp"

namespace eagerlm::server {

namespace {
std::string type_for(int status, const std::string& type) {
  if (!type.empty()) return type;
  if (status == 401) return "authentication_error";
  return status >= 500 ? "server_error" : "invalid_request_error";
}
nlohmann::json null_if_empty(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); }

}  // namespace

ApiError::ApiError(int status_, const std::string& message, std::string param_, std::string code_, std::string type_)
    // One line whatever client text it quotes (quoting sites also cut long text; this is the
    // guarantee for all of them): the library's rule for its own errors.
    : std::runtime_error(one_line_message(message)),
      status(status_),
      param(std::move(param_)),
      code(std::move(code_)),
      type(type_for(status_, type_)) {}

std::string client_text(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;  // not inside a character
  return std::string(text.substr(0, cut)) + "...";
}

ApiError invalid_field(const std::string& param, const std::string& message, std::string code) {
  return ApiError(400, message, param, std::move(code));
}

std::string error_body(int status, const std::string& message, const std::string& param, const std::string& code,
                       const std::string& type) {
  const nlohmann::json body = {{"error",
                                {{"message", message},
                                 {"type", type_for(status, type)},
                                 {"param", null_if_empty(param)},
                                 {"code", null_if_empty(code)}}}};
  // Messages may quote client text; anything not UTF-8 is replaced rather than refused.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string error_body(const ApiError& e) { return error_body(e.status, e.what(), e.param, e.code, e.type); }

}  // namespace eagerlm::server
