// The built-in CPU backend (see backend.h).
#pragma once

#include <string>

#include "engine/core/backend.h"

namespace eagerlm {

Backend& cpu_backend();

// The model name /proc/cpuinfo gives ("unknown CPU" without one).
std::string cpu_model_name();

}  // namespace eagerlm
