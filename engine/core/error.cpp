#include "engine/core/error.h"

namespace eagerlm {

std::string one_line_message(const std::string& message) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(message.size());
  for (const char c : message) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b != 0x7f) {
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += "\\x";
      out += hex[b >> 4];
      out += hex[b & 15];
    }
  }
  return out;
}

Error::Error(ErrorCode code, const std::string& message) : std::runtime_error(one_line_message(message)), code_(code) {}

Error::~Error() = default;

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kInvalidFile: return "invalid file";
    case ErrorCode::kIo: return "I/O error";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kOutOfMemory: return "out of memory";
    case ErrorCode::kInternal: return "internal error";
    case ErrorCode::kBusy: return "busy";
  }
  return "unknown error";
}

}  // namespace eagerlm
