// Entry point of test_cuda_ops, the kernel tests (kernels/cuda linked in): without a usable CUDA
// device the binary prints why and exits with 77, which CTest's SKIP_RETURN_CODE reports as
// "skipped" (not passed); otherwise it runs the Catch2 session as usual.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include "kernels/cuda/cuda_memory.h"

int main(int argc, char* argv[]) {
  if (eagerlm::cuda::device_count() == 0) {
    std::printf("no CUDA device: skipped (%s)\n", eagerlm::cuda::unavailable_reason());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
