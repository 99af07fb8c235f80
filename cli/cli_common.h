// Helpers shared by subcommands: standard option groups and output conventions.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/generation/generator.h"
#include "engine/tokenizer/tokenizer.h"

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

// Checks generation options by the engine's rules (GenerationOptions::validate); an option out of
// range is a UsageError naming its flag (-n/--max-new-tokens, --temperature, --top-k, ...).
void validate_as_flags(const GenerationOptions& options);

// -m/--model DIR for the commands that only need a tokenizer (tokenize, detokenize), and the
// tokenizer it names: the directory's tokenizer files, or GPT-2's built-in vocabulary.
void add_tokenizer_option(CLI::App& app, std::string& model_dir);
Tokenizer tokenizer_for(const std::string& model_dir);

// --invalid-utf8 error|replace, and what it means for the tokenizer.
void add_invalid_utf8_option(CLI::App& app, std::string& mode);
InvalidUtf8 invalid_utf8_mode(const std::string& mode);

// Writes all of `bytes` to standard output and flushes; throws Error(kIo) naming `what`.
void write_stdout(std::string_view bytes, const char* what);

// The whole contents of a text file named by a flag. Anything but a readable regular file (a
// directory, a FIFO, a device, a dangling link) is a usage error naming the flag; a read that
// fails midway is Error(kIo).
std::string read_text_file(const std::string& path, const char* flag);

// Refuses an --out that is a file, or a non-empty directory without --force (before any work):
// a UsageError naming --out.
void check_out_dir(const std::string& out_dir, bool force);

// Reads a whole stream (standard input) as bytes.
std::string read_all_stdin();

}  // namespace eagerlm::cli
