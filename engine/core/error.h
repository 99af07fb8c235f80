// The one exception type eagerlm throws. Library code never exits or aborts on user data;
// only main() turns an Error into an exit code (and the C API into a status).
#pragma once

#include <stdexcept>
#include <string>

namespace eagerlm {

enum class ErrorCode {
  kInvalidArgument,  // a bad option or value from the caller
  kInvalidFile,      // a model, config or tokenizer file that is malformed
  kIo,               // a file that cannot be opened, read or written
  kUnsupported,      // a valid request this build cannot serve (e.g. CUDA without a GPU)
  kOutOfMemory,      // an allocation that failed or would not fit
  kInternal,         // a broken invariant: a bug in eagerlm
};

const char* error_code_name(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

[[noreturn]] inline void throw_error(ErrorCode code, const std::string& message) {
  throw Error(code, message);
}

// Checks an internal invariant; failing it is a bug, reported with the file and line.
#define EAGERLM_ASSERT(cond)                                                                  \
  do {                                                                                        \
    if (!(cond))                                                                              \
      ::eagerlm::throw_error(::eagerlm::ErrorCode::kInternal,                                 \
                             std::string("internal check failed: " #cond " at ") + __FILE__ + \
                                 ":" + std::to_string(__LINE__));                             \
  } while (0)

}  // namespace eagerlm
