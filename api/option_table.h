// Every generation option by name, once: its type, what it does and how a value given as text
// sets it in GenerateOptions. The C API's eagerlm_options_set and the documented option table
// (docs/library.md) come from here; the defaults are GenerateOptions' own initializers, which a
// test holds equal to the engine's (engine/generation/options.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "eagerlm/generator.hpp"

namespace eagerlm::library {

struct OptionSpec {
  const char* name;  // Hugging Face's / OpenAI's name
  const char* type;  // what a value looks like, for messages and docs
  const char* help;
  // Parses `text` into `options`; throws Error(kInvalidArgument) "<name>: expected <type>, got '…'".
  void (*set)(GenerateOptions& options, std::string_view name, std::string_view text);
};

const std::vector<OptionSpec>& option_table();
// Sets one option by name from text; an unknown name is Error(kInvalidArgument) listing the known ones.
void set_option(GenerateOptions& options, std::string_view name, std::string_view text);

}  // namespace eagerlm::library
