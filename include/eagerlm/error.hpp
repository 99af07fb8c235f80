// The one exception type of eagerlm's C++ API, and of the whole engine: every failure is an
// eagerlm::Error carrying an ErrorCode and a message that names the file, field, tensor or option
// and says what was expected. (The C API turns it into a status code and a message.)
#pragma once

#include <stdexcept>
#include <string>

#include "export.h"

namespace eagerlm {

enum class ErrorCode {
  kInvalidArgument,  // a bad option or value from the caller
  kInvalidFile,      // a model, config or tokenizer file that is malformed
  kIo,               // a file that cannot be opened, read or written
  kUnsupported,      // a valid request this build or machine cannot serve (e.g. CUDA without a GPU)
  kOutOfMemory,      // an allocation that failed or would not fit
  kInternal,         // a broken invariant: a bug in eagerlm
  kBusy,             // no room now (a full request queue): the same call may succeed later
};

// "invalid argument", "invalid file", "I/O error", "unsupported", "out of memory", "internal error",
// "busy".
EAGERLM_API const char* error_code_name(ErrorCode code);

// `message` as one line, as Error stores it: control characters as C escapes (\n, \t, \x1b),
// everything else (UTF-8 included) as it is. For front ends with error types of their own.
EAGERLM_API std::string one_line_message(const std::string& message);

class EAGERLM_API Error : public std::runtime_error {
 public:
  // what() is one line whatever the message quotes (a name from a malformed file, say): its
  // control characters are written as escapes (\n, \t, \x1b).
  Error(ErrorCode code, const std::string& message);
  ~Error() override;  // defined in the library: one vtable and type_info for every module
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace eagerlm
