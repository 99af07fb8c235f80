// What the C++ API's implementation files share: the contents of a Model handle, the option
// conversion, the per-call CPU thread setting, and the rule that only eagerlm::Error (or the
// user's own exception from a callback) leaves the API.
#pragma once

#include <exception>
#include <memory>
#include <new>
#include <string>

#include "eagerlm/generator.hpp"
#include "eagerlm/model.hpp"
#include "engine/core/error.h"
#include "engine/generation/generator.h"
#include "engine/tokenizer/tokenizer.h"
#include "models/gpt2/model.h"

namespace eagerlm {

struct Model::Impl {
  std::shared_ptr<const gpt2::Model> model;
  Tokenizer tokenizer;
  std::string source;
};

namespace library {

// Makes the calling thread use the thread count set with set_cpu_threads (OpenMP's setting is
// per thread, so each API call applies it to the thread it runs on).
void apply_cpu_threads();

// The engine's options for `options`; throws Error(kInvalidArgument) naming a bad option.
GenerationOptions to_generation_options(const GenerateOptions& options, int32_t eos_id);

// Carries an exception thrown by the user's callback through the engine, untouched.
struct CallbackException {
  std::exception_ptr error;
};

// Runs f(): an eagerlm::Error passes through, the user's callback exception is rethrown as it
// was, and anything else (std::bad_alloc, a standard library exception) becomes an Error.
template <typename F>
auto translate_errors(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const CallbackException& c) {
    std::rethrow_exception(c.error);
  } catch (const std::bad_alloc&) {
    throw Error(ErrorCode::kOutOfMemory, "out of memory: a host allocation failed");
  } catch (const std::exception& e) {
    throw Error(ErrorCode::kInternal, std::string("unexpected error: ") + e.what());
  }
}

}  // namespace library
}  // namespace eagerlm
