// The one exception type eagerlm throws. Library code never exits or aborts on user data;
// only main() turns an Error into an exit code (and the C API into a status). ErrorCode and Error
// themselves are part of the public API (include/eagerlm/error.hpp), so that the engine and the
// library's users share exactly one type.
#pragma once

#include <string>
#include <utility>

#include "eagerlm/error.hpp"

namespace eagerlm {

[[noreturn]] inline void throw_error(ErrorCode code, const std::string& message) { throw Error(code, message); }

// An option out of its range. option() is the option's canonical name ("temperature", "top_k"),
// so that a front end can name it the way its users spell it (a CLI flag, a request field);
// the message says "<option> must be <expected>, got <value>".
class OptionError : public Error {
 public:
  OptionError(std::string option, std::string expected, std::string got)
      : Error(ErrorCode::kInvalidArgument, option + " must be " + expected + ", got " + got),
        option_(std::move(option)),
        expected_(std::move(expected)),
        got_(std::move(got)) {}
  const std::string& option() const { return option_; }
  const std::string& expected() const { return expected_; }
  const std::string& got() const { return got_; }

 private:
  std::string option_, expected_, got_;
};

// Checks an internal invariant; failing it is a bug, reported with the file and line.
#define EAGERLM_ASSERT(cond)                                                                                        \
  do {                                                                                                              \
    if (!(cond))                                                                                                    \
      ::eagerlm::throw_error(::eagerlm::ErrorCode::kInternal, std::string("internal check failed: " #cond " at ") + \
                                                                  __FILE__ + ":" + std::to_string(__LINE__));       \
  } while (0)

}  // namespace eagerlm
