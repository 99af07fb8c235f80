// The Catch2 main of the test binaries that run once per CPU kernel variant (CTest registers
// <test>_<isa> with EAGERLM_CPU_ISA=<isa>, see test/CMakeLists.txt). A variant this CPU lacks is
// reported as skipped (exit 77), never silently replaced by another; the variant that runs is
// printed first, so every log says which one it tested.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>

#include "kernels/cpu/cpu_ops.h"

int main(int argc, char* argv[]) {
  const std::string& problem = eagerlm::cpu::isa_request_problem();
  if (!problem.empty()) {
    std::printf("skipped: %s\n", problem.c_str());
    return 77;
  }
  std::printf("CPU kernel variant: %s\n", eagerlm::cpu::active_isa());
  return Catch::Session().run(argc, argv);
}
