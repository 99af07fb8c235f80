// What the C++ API's implementation files share: the contents of a Model handle, the option
// conversion, the per-call CPU thread setting, and the rule that only eagerlm::Error (or the
// user's own exception from a callback) leaves the API.
#pragma once

#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "eagerlm/generator.hpp"
#include "eagerlm/model.hpp"
#include "eagerlm/parameters.hpp"
#include "engine/core/error.h"
#include "engine/generation/generator.h"
#include "engine/tokenizer/tokenizer.h"
#include "models/gpt2/model.h"
#include "models/gpt2/model_source.h"

namespace eagerlm {

struct Model::Impl {
  std::shared_ptr<const gpt2::Model> model;
  Tokenizer tokenizer;
  std::string source;
  std::string text_problem;  // why text cannot be encoded for this model ("" when it can)

  // Throws Error(kInvalidArgument) with text_problem when text cannot be encoded.
  void require_text() const {
    if (!text_problem.empty()) throw Error(ErrorCode::kInvalidArgument, text_problem);
  }
};

namespace library {

// Makes the calling thread use the thread count set with set_cpu_threads (OpenMP's setting is
// per thread, so each API call applies it to the thread it runs on).
void apply_cpu_threads();

// The model's Config for a public one, checked (Error kInvalidArgument naming the field); and back.
gpt2::Config engine_config(const ModelConfig& config);
ModelConfig public_config(const gpt2::Config& config);
// The model's parameters over caller-owned views, matched as a checkpoint's tensors are (Error
// kInvalidArgument naming the tensor); aligned host memory is used in place, held by keep_alive.
gpt2::ParameterTensors parameters_from_views(const gpt2::Config& config, const std::vector<TensorView>& views,
                                             const std::shared_ptr<const void>& keep_alive);

// The engine's options for `options`; throws Error(kInvalidArgument) naming a bad option.
GenerationOptions to_generation_options(const GenerateOptions& options, int32_t eos_id);
// An engine result as the public one, answering prompt `index`.
Result to_result(GenerationResult&& result, size_t index);
// A streamed token as the public event (answering prompt `index`).
TokenEvent to_token_event(size_t index, const StreamEvent& event);

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
