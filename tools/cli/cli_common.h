// Helpers shared by subcommands: standard option groups and output conventions.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace eagerlm::cli {

// Adds -t/--threads N (1 .. cores·4); 0 means "leave the default" (all cores).
void add_threads_option(CLI::App& app, int& threads);
// Applies a --threads value after parsing.
void apply_threads(int threads);

// True when standard output / error is a terminal (progress bars only then).
bool stdout_is_tty();
bool stderr_is_tty();

// An unsigned 64-bit flag value, nothing else: no sign, no overflow, no trailing text (CLI11
// alone would wrap "-1"). Throws UsageError naming `flag`.
uint64_t parse_u64_flag(const char* flag, const std::string& text);

// Reads a whole stream (standard input) as bytes.
std::string read_all_stdin();

}  // namespace eagerlm::cli
