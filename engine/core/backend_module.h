// The contract between libeagerlm and a backend module loaded at run time (today
// libeagerlm-cuda.so, built from engine/cuda/). A module exports one C symbol,
// kBackendModuleSymbol, returning this description; the loader (backend_registry.cpp) refuses a
// module whose ABI or version differs from its own, so a stale module from another build can
// never be mixed in.
#pragma once

#include <cstdint>

namespace eagerlm {

class Backend;

// Bumped whenever backend.h changes in a way that breaks a module built against the old one.
// 2: Backend::measure_limits; 3: Queue::kv_copy; 4: Queue::target_logprobs, reserve_target_logprobs;
// 5: typed weights (linear_typed, linear_transposed_typed, embedding of a typed wte) and BF16/F16
// KV caches; 6: Backend::measure_read_bandwidth; 7: Queue::prefill_chunk.
constexpr uint32_t kBackendModuleAbi = 7;
constexpr const char* kBackendModuleSymbol = "eagerlm_backend_module";

struct BackendModule {
  uint32_t abi;         // kBackendModuleAbi of the module's build
  const char* version;  // EAGERLM_VERSION_STRING of the module's build
  // The module's backend, created on the first call and alive until the process exits. Never
  // throws: on failure returns null and sets *error to a static or module-owned message.
  Backend* (*backend)(const char** error);
};

}  // namespace eagerlm

extern "C" {
// The signature of the exported symbol.
using eagerlm_backend_module_fn = const eagerlm::BackendModule* (*)();
}
