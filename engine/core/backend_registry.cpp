// backend_for(): the built-in CPU backend, or the CUDA backend from its module, loaded with
// dlopen the first time it is asked for. Loading happens once per process; its outcome (the
// backend, or why there is none) is kept, so a failed load is not retried on every call.
//
// Where the module is looked for, in order:
//   1. $EAGERLM_CUDA_MODULE, if set (a path to the file);
//   2. beside the file holding this code (libeagerlm.so in lib/, or a program), and in the
//      library directory relative to a program's bin/ (EAGERLM_MODULE_DIR_FROM_BIN);
//   3. the dynamic linker's own search (LD_LIBRARY_PATH, the system's library paths).
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <vector>

#include "eagerlm/version.h"
#include "engine/core/backend.h"
#include "engine/core/backend_module.h"
#include "engine/core/cpu_backend.h"
#include "engine/core/device.h"
#include "engine/core/error.h"

#ifndef EAGERLM_MODULE_DIR_FROM_BIN
#define EAGERLM_MODULE_DIR_FROM_BIN "../lib"
#endif
#ifndef EAGERLM_CUDA_MODULE_BUILT  // whether this build made libeagerlm-cuda.so (for the message)
#define EAGERLM_CUDA_MODULE_BUILT 0
#endif

namespace eagerlm {

namespace {

constexpr const char* kCudaModuleFile = "libeagerlm-cuda.so";

struct LoadedModule {
  Backend* backend = nullptr;
  std::string failure;  // why backend is null
};

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::vector<std::string> module_candidates() {
  if (const char* explicit_path = std::getenv("EAGERLM_CUDA_MODULE"); explicit_path && *explicit_path)
    return {explicit_path};
  std::vector<std::string> paths;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&backend_for), &info) != 0 && info.dli_fname) {
    char resolved[PATH_MAX];
    const std::string self = realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
    const std::string dir = directory_of(self);
    paths.push_back(dir + "/" + kCudaModuleFile);
    paths.push_back(dir + "/" + EAGERLM_MODULE_DIR_FROM_BIN + "/" + kCudaModuleFile);
  }
  paths.push_back(kCudaModuleFile);  // the dynamic linker's search
  return paths;
}

LoadedModule load_cuda_module() {
  LoadedModule out;
  std::string searched, broken;  // places looked in; why a module that exists would not load
  void* handle = nullptr;
  for (const std::string& path : module_candidates()) {
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) break;
    const char* why = dlerror();
    const bool is_path = path.find('/') != std::string::npos;
    if (!is_path || access(path.c_str(), F_OK) == 0) {
      // A file that exists but does not load (a missing libcublas, a wrong architecture) says more
      // than any number of places where there was nothing; so does the dynamic linker's search.
      if (is_path || (why && std::string(why).find("cannot open shared object file") == std::string::npos))
        broken = why ? why : path + ": not loadable";
    }
    searched += (searched.empty() ? "" : ", ") + (is_path ? directory_of(path) : std::string("the library path"));
  }
  if (!handle) {
    if (!broken.empty())
      out.failure = std::string("the CUDA backend module ") + kCudaModuleFile + " failed to load: " + broken;
    else if (!EAGERLM_CUDA_MODULE_BUILT && !std::getenv("EAGERLM_CUDA_MODULE"))
      out.failure = std::string(
                        "this eagerlm was built without the CUDA backend (EAGERLM_CUDA=OFF, or no nvcc), "
                        "so there is no ") +
                    kCudaModuleFile;
    else
      out.failure = std::string("the CUDA backend module ") + kCudaModuleFile + " was not found (looked in " +
                    searched + "; set EAGERLM_CUDA_MODULE to its path)";
    return out;
  }
  auto entry = reinterpret_cast<eagerlm_backend_module_fn>(dlsym(handle, kBackendModuleSymbol));
  const BackendModule* module = entry ? entry() : nullptr;
  if (!module) {
    out.failure =
        std::string(kCudaModuleFile) + " exports no " + kBackendModuleSymbol + ": not an eagerlm backend module";
    return out;  // the handle stays open: unloading code that may have run is never safe
  }
  if (module->abi != kBackendModuleAbi || std::string(module->version) != EAGERLM_VERSION_STRING) {
    out.failure = std::string(kCudaModuleFile) + " is from eagerlm " + module->version + " (module ABI " +
                  std::to_string(module->abi) + "), this library is " + EAGERLM_VERSION_STRING + " (ABI " +
                  std::to_string(kBackendModuleAbi) + "): install the module of the same build";
    return out;
  }
  const char* error = nullptr;
  out.backend = module->backend(&error);
  if (!out.backend)
    out.failure = std::string(kCudaModuleFile) + ": " + (error ? error : "the CUDA backend could not start");
  return out;
}

const LoadedModule& cuda_module() {
  static const LoadedModule module = load_cuda_module();  // thread-safe, once
  return module;
}

}  // namespace

Backend& backend_for(Device device) {
  if (device == Device::kCpu) return cpu_backend();
  if (device != Device::kCuda)
    throw_error(ErrorCode::kInvalidArgument, "unknown device " + std::to_string(int(device)));
  const LoadedModule& m = cuda_module();
  if (!m.backend) throw_error(ErrorCode::kUnsupported, "CUDA device requested but " + m.failure);
  const std::string reason = m.backend->unavailable_reason();
  if (!reason.empty()) throw_error(ErrorCode::kUnsupported, "CUDA device requested but " + reason);
  return *m.backend;
}

bool cuda_available() {
  const LoadedModule& m = cuda_module();
  return m.backend && m.backend->unavailable_reason().empty();
}

std::string cuda_unavailable_reason() {
  const LoadedModule& m = cuda_module();
  if (!m.backend) return m.failure;
  const std::string reason = m.backend->unavailable_reason();
  return reason.empty() ? "CUDA is available" : reason;
}

}  // namespace eagerlm
