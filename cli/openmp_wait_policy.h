// Passive OpenMP waiting for the eagerlm command (see openmp_wait_policy.cpp for why and how).
#pragma once

namespace eagerlm::cli {

// Call first thing in main(): for a subcommand that runs OpenMP work (generate, bench, init),
// may replace the process image with a fresh run of itself whose environment has
// OMP_WAIT_POLICY=passive. Returns when nothing needs to change: the variable is set already, or
// the command runs no parallel work (--version, --help, tokenize, detokenize, info start at once).
void prefer_passive_openmp_waiting(int argc, char** argv);

}  // namespace eagerlm::cli
