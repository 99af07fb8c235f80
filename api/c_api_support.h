// The machinery under every C API function: what the opaque handles hold, the guard that turns
// any exception into a status and this thread's last-error message, and the size-query
// convention for output buffers (see include/eagerlm/eagerlm.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "eagerlm/eagerlm.h"
#include "eagerlm/eagerlm.hpp"

struct eagerlm_model {
  eagerlm::Model model;
};
struct eagerlm_generator {
  eagerlm::Generator generator;
};
struct eagerlm_options {
  eagerlm::GenerateOptions options;
};
struct eagerlm_result {
  std::vector<eagerlm::Result> results;
};
struct eagerlm_engine {
  eagerlm::Engine engine;
};
struct eagerlm_request {
  std::shared_ptr<eagerlm::Engine::Request> request;
  eagerlm::StreamedToken last;  // the token eagerlm_request_next handed out last (its text)
};

namespace eagerlm::capi {

// A failure decided by the C layer itself (a NULL argument, a buffer too small).
struct Failure {
  eagerlm_status status;
  std::string message;
};

[[noreturn]] void fail(eagerlm_status status, std::string message);
// Fails with EAGERLM_ERROR_INVALID_ARGUMENT "<function>: <name> is NULL" when p is null.
void require(const void* p, const char* function, const char* name);

// Splits `ids` into `batch` sequences of the given lengths (checking the pointers and the sum).
std::vector<std::vector<int32_t>> split_sequences(const char* function, const int32_t* ids, const size_t* lengths,
                                                  size_t batch);

// Records the outcome for eagerlm_last_error(); never throws.
eagerlm_status finish(eagerlm_status status, const char* message) noexcept;
// Maps whatever is in flight (inside a catch block) to a status and records its message.
eagerlm_status status_of_current_exception() noexcept;

// Runs body(); returns EAGERLM_OK, or the status of whatever it threw. Nothing escapes.
template <typename Body>
eagerlm_status guarded(Body&& body) noexcept {
  try {
    body();
    return finish(EAGERLM_OK, "");
  } catch (...) {
    return status_of_current_exception();
  }
}

// The size-query convention: *count always gets n; a NULL `out` stops there; otherwise the
// values are copied if they fit in `capacity`, else EAGERLM_ERROR_BUFFER_TOO_SMALL.
template <typename T>
void copy_out(const char* function, const T* values, size_t n, T* out, size_t capacity, size_t* count) {
  require(count, function, "count");
  *count = n;
  if (!out) return;
  if (capacity < n)
    fail(EAGERLM_ERROR_BUFFER_TOO_SMALL, std::string(function) + ": the buffer holds " + std::to_string(capacity) +
                                             " values; " + std::to_string(n) + " are needed");
  for (size_t i = 0; i < n; ++i) out[i] = values[i];
}

// The same for text: *size gets its length; the buffer needs one more byte for the NUL.
void copy_text_out(const char* function, std::string_view text, char* out, size_t capacity, size_t* size);

Device to_device(eagerlm_device device);

}  // namespace eagerlm::capi
