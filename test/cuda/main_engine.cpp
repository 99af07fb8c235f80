// Entry point of test_cuda_model, the whole-model tests, which reach the GPU through the CUDA
// module as users do: without a usable CUDA device (or module) the binary prints why and exits
// with 77, which CTest's SKIP_RETURN_CODE reports as "skipped"; otherwise it runs Catch2.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include "engine/core/device.h"

int main(int argc, char* argv[]) {
  if (!eagerlm::cuda_available()) {
    std::printf("no CUDA device: skipped (%s)\n", eagerlm::cuda_unavailable_reason().c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
