// Passive OpenMP waiting for the eagerlm command (see openmp_wait_policy.cpp for why and how).
#pragma once

namespace eagerlm::cli {

// Call first thing in main(): may replace the process image with a fresh run of itself whose
// environment has OMP_WAIT_POLICY=passive. Returns when nothing needs to change.
void prefer_passive_openmp_waiting(char** argv);

}  // namespace eagerlm::cli
