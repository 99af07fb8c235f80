// An error answered to a client in OpenAI's shape,
//   {"error": {"message": "...", "type": "...", "param": "..." | null, "code": "..." | null}},
// with its HTTP status. Every handler reports failures by throwing ApiError; the router turns it
// into the response, so each failure is stated once, where it is found.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace eagerlm::server {

struct ApiError : std::runtime_error {
  // type: OpenAI's error type; empty picks it from the status (invalid_request_error for 4xx,
  // server_error for 5xx). param and code: empty means null.
  ApiError(int status, const std::string& message, std::string param = {}, std::string code = {},
           std::string type = {});

  int status;
  std::string param, code, type;
  int retry_after_s = 0;  // > 0: sent as Retry-After (429 and 503)
};

// 400 naming the request field `param`.
ApiError invalid_field(const std::string& param, const std::string& message, std::string code = {});

// Client text a message quotes (a field name, a model name, a URL): cut after max_bytes, at a
// character boundary, with "..." appended. (ApiError escapes its control bytes.)
std::string client_text(std::string_view text, size_t max_bytes = 80);

// The JSON body of an error response.
std::string error_body(int status, const std::string& message, const std::string& param = {},
                       const std::string& code = {}, const std::string& type = {});
std::string error_body(const ApiError& error);

}  // namespace eagerlm::server
