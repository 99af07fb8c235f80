// eagerlm's C++ API, all of it: `#include <eagerlm/eagerlm.hpp>` and link eagerlm::eagerlm
// (CMake) or `pkg-config --libs eagerlm`. Needs C++17. Everything is in namespace eagerlm; every
// failure is an eagerlm::Error. docs/library.md has an example, the error model, the threading
// rules and the ABI promise.
#pragma once

#include "attention.hpp"
#include "common.hpp"
#include "eagerlm/version.h"
#include "engine.hpp"
#include "error.hpp"
#include "generator.hpp"
#include "jax_primitives.hpp"
#include "model.hpp"
#include "parameters.hpp"
