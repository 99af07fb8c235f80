// The one exception type eagerlm throws. Library code never exits or aborts on user data;
// only main() turns an Error into an exit code (and the C API into a status). ErrorCode and Error
// themselves are part of the public API (include/eagerlm/error.hpp), so that the engine and the
// library's users share exactly one type.
#pragma once

#include <string>

#include "eagerlm/error.hpp"

namespace eagerlm {

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
