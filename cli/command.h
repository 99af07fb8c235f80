// How subcommands plug into the `eagerlm` command line. Each cmd_<name>.cpp defines one
// `Subcommand add_<name>_command(CLI::App& root)` that registers its options and returns the
// action to run when it is chosen; main.cpp lists them once.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <stdexcept>
#include <string>

namespace eagerlm::cli {

struct Subcommand {
  CLI::App* app;
  std::function<int()> run;  // returns the process exit code
};

// A flag value that parsed but is not acceptable (e.g. --top-p 2). main() prints it and exits 2,
// like CLI11's own parse errors. The message names the flag.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace eagerlm::cli
