#include "engine/core/error.h"

namespace eagerlm {

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
