// The C API's error plumbing: statuses, this thread's last-error message, output buffers.
#include "api/c_api_support.h"

#include <cstring>
#include <limits>
#include <new>

namespace eagerlm::capi {

namespace {

thread_local std::string t_message;
// Used only when recording the message itself runs out of memory.
thread_local const char* t_fallback = nullptr;

eagerlm_status status_of(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return EAGERLM_ERROR_INVALID_ARGUMENT;
    case ErrorCode::kInvalidFile: return EAGERLM_ERROR_INVALID_FILE;
    case ErrorCode::kIo: return EAGERLM_ERROR_IO;
    case ErrorCode::kUnsupported: return EAGERLM_ERROR_UNSUPPORTED;
    case ErrorCode::kOutOfMemory: return EAGERLM_ERROR_OUT_OF_MEMORY;
    case ErrorCode::kInternal: return EAGERLM_ERROR_INTERNAL;
    case ErrorCode::kBusy: return EAGERLM_ERROR_BUSY;
  }
  return EAGERLM_ERROR_INTERNAL;
}

}  // namespace

void fail(eagerlm_status status, std::string message) { throw Failure{status, std::move(message)}; }

void require(const void* p, const char* function, const char* name) {
  if (!p) fail(EAGERLM_ERROR_INVALID_ARGUMENT, std::string(function) + ": " + name + " is NULL");
}

std::vector<std::vector<int32_t>> split_sequences(const char* function, const int32_t* ids, const size_t* lengths,
                                                  size_t batch) {
  std::vector<std::vector<int32_t>> out;
  if (batch == 0) return out;
  require(lengths, function, "lengths");
  size_t total = 0;
  for (size_t i = 0; i < batch; ++i) {
    if (lengths[i] > std::numeric_limits<size_t>::max() - total)
      fail(EAGERLM_ERROR_INVALID_ARGUMENT, std::string(function) + ": the lengths overflow size_t");
    total += lengths[i];
  }
  if (total > 0) require(ids, function, "ids");
  out.reserve(batch);
  for (size_t i = 0, at = 0; i < batch; at += lengths[i], ++i) out.emplace_back(ids + at, ids + at + lengths[i]);
  return out;
}

eagerlm_status finish(eagerlm_status status, const char* message) noexcept {
  try {
    t_message.assign(message);
    t_fallback = nullptr;
  } catch (...) {
    t_message.clear();
    t_fallback = "out of memory (while recording an error message)";
  }
  return status;
}

eagerlm_status status_of_current_exception() noexcept {
  try {
    throw;
  } catch (const Failure& f) {
    return finish(f.status, f.message.c_str());
  } catch (const Error& e) {
    return finish(status_of(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return finish(EAGERLM_ERROR_OUT_OF_MEMORY, "out of memory: a host allocation failed");
  } catch (const std::exception& e) {
    return finish(EAGERLM_ERROR_INTERNAL, e.what());
  } catch (...) {
    return finish(EAGERLM_ERROR_INTERNAL, "unknown exception");
  }
}

void copy_text_out(const char* function, std::string_view text, char* out, size_t capacity, size_t* size) {
  require(size, function, "size");
  *size = text.size();
  if (!out) return;
  if (capacity <= text.size())
    fail(EAGERLM_ERROR_BUFFER_TOO_SMALL, std::string(function) + ": the buffer holds " + std::to_string(capacity) +
                                             " bytes; the text needs " + std::to_string(text.size()) +
                                             " plus a terminating NUL");
  std::memcpy(out, text.data(), text.size());
  out[text.size()] = '\0';
}

Device to_device(eagerlm_device device) {
  if (device == EAGERLM_DEVICE_CPU) return Device::kCpu;
  if (device == EAGERLM_DEVICE_CUDA) return Device::kCuda;
  fail(EAGERLM_ERROR_INVALID_ARGUMENT,
       "device: expected EAGERLM_DEVICE_CPU (0) or EAGERLM_DEVICE_CUDA (1), got " + std::to_string(int(device)));
}

}  // namespace eagerlm::capi

extern "C" {

const char* eagerlm_last_error(void) {
  using namespace eagerlm::capi;
  return t_fallback ? t_fallback : t_message.c_str();
}

const char* eagerlm_status_name(eagerlm_status status) {
  switch (status) {
    case EAGERLM_OK: return "ok";
    case EAGERLM_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case EAGERLM_ERROR_INVALID_FILE: return "invalid file";
    case EAGERLM_ERROR_IO: return "I/O error";
    case EAGERLM_ERROR_UNSUPPORTED: return "unsupported";
    case EAGERLM_ERROR_OUT_OF_MEMORY: return "out of memory";
    case EAGERLM_ERROR_INTERNAL: return "internal error";
    case EAGERLM_ERROR_BUSY: return "busy";
    case EAGERLM_ERROR_BUFFER_TOO_SMALL: return "buffer too small";
    default: break;
  }
  return "unknown status";
}

}  // extern "C"
