// eagerlm::ModelConfig: the public config, converted to and from the GPT-2 model's own Config in
// this one place, and checked by its rules (models/gpt2/config.h).
#include <string>

#include "api/library_internal.h"
#include "eagerlm/parameters.hpp"
#include "models/gpt2/config.h"
#include "models/gpt2/model_source.h"

namespace eagerlm {

namespace library {

namespace {

// A config the caller gave as values is a bad argument, not a bad file: same message, that code.
template <typename F>
auto as_argument_error(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kInvalidFile) throw;
    throw Error(ErrorCode::kInvalidArgument, e.what());
  }
}

}  // namespace

gpt2::Config engine_config(const ModelConfig& c) {
  gpt2::Config g;
  g.n_layer = c.n_layer;
  g.n_embd = c.n_embd;
  g.n_head = c.n_head;
  g.n_positions = c.n_positions;
  g.vocab_size = c.vocab_size;
  g.n_inner = c.n_inner;
  g.layer_norm_epsilon = c.layer_norm_epsilon;
  g.initializer_range = c.initializer_range;
  g.activation_function = c.activation_function;
  g.eos_token_id = c.eos_token_id;
  as_argument_error([&] { g.validate("config"); });
  return g;
}

ModelConfig public_config(const gpt2::Config& g) {
  ModelConfig c;
  c.n_layer = g.n_layer;
  c.n_embd = g.n_embd;
  c.n_head = g.n_head;
  c.n_positions = g.n_positions;
  c.vocab_size = g.vocab_size;
  c.n_inner = g.n_inner;
  c.layer_norm_epsilon = g.layer_norm_epsilon;
  c.initializer_range = g.initializer_range;
  c.activation_function = g.activation_function;
  c.eos_token_id = g.eos_token_id;
  return c;
}

}  // namespace library

ModelConfig ModelConfig::load(const std::string& preset_or_config) {
  return library::translate_errors([&] { return library::public_config(gpt2::config_for(preset_or_config)); });
}

ModelConfig ModelConfig::from_json(const std::string& text, const std::string& source) {
  return library::translate_errors([&] {
    return library::as_argument_error([&] { return library::public_config(gpt2::config_from_json(text, source)); });
  });
}

std::string ModelConfig::to_json() const {
  return library::translate_errors([&] { return library::engine_config(*this).to_json(); });
}

}  // namespace eagerlm
