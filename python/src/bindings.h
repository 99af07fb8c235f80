// The pieces of eagerlm._core, the extension module over eagerlm's public C++ API
// (include/eagerlm/*.hpp) and nothing else. Each bind_*.cpp registers one part; the Python
// package (python/eagerlm/) puts Python's habits on top: keyword options, dataclasses, iterators.
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <string_view>
#include <vector>

#include <eagerlm/eagerlm.hpp>

namespace eagerlm::python {

namespace nb = nanobind;

void bind_errors(nb::module_& m);      // eagerlm::Error -> the eagerlm.Error subclass of its code
void bind_library(nb::module_& m);     // version, CPU threads, CUDA availability
void bind_parameters(nb::module_& m);  // ModelConfig, parameter_shapes, initialize_parameters
void bind_model(nb::module_& m);       // Model
void bind_generator(nb::module_& m);   // GenerateOptions, Result, Generator
void bind_engine(nb::module_& m);      // Engine, its Request handles, stats, streamed tokens
void bind_jax(nb::module_& m);         // JAX's primitives for eagerlm.jax (jax_primitives.hpp)
void bind_xla_ffi(nb::module_& m);     // padded_attention as an XLA FFI handler (attention.hpp)

// "cpu" or "cuda"; anything else is an Error(kInvalidArgument) naming the value.
Device parse_device(std::string_view name);

// UTF-8 text as a Python str, with U+FFFD for any invalid byte (generated text is valid UTF-8 by
// the engine's promise; this keeps a broken promise from becoming a crash).
nb::str utf8_text(std::string_view text);

// Alternatives at one position as a list of (id, logprob) tuples.
nb::list top_list(const std::vector<TokenLogprob>& top);

}  // namespace eagerlm::python
