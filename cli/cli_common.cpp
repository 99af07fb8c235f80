#include "cli/cli_common.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <cstdio>

#include <iostream>
#include <iterator>

#include "cli/command.h"
#include "engine/core/error.h"
#include "engine/core/text.h"
#include "engine/core/threads.h"
#include "engine/io/atomic_file.h"

namespace eagerlm::cli {

void add_threads_option(CLI::App& app, int& threads) {
  const int max_threads = hardware_threads() * 4;
  app.add_option("-t,--threads", threads, "CPU threads (default: all cores)")->check(CLI::Range(1, max_threads));
}

void apply_threads(int threads) { set_num_threads(threads > 0 ? threads : hardware_threads()); }

uint64_t parse_u64_flag(const char* flag, const std::string& text) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end)
    throw UsageError(std::string(flag) + ": expected an integer in [0, 18446744073709551615], got '" + text + "'");
  return value;
}

void validate_as_flags(const GenerationOptions& options) {
  try {
    options.validate();
  } catch (const OptionError& e) {
    std::string flag = e.option();
    if (flag == "max_new_tokens") {
      flag = "-n/--max-new-tokens";
    } else if (flag == "n") {
      flag = "--num-samples";
    } else if (flag == "seed") {
      flag = "-s/--seed";
    } else {
      for (char& c : flag)
        if (c == '_') c = '-';
      flag = "--" + flag;
    }
    throw UsageError(flag + ": expected " + e.expected() + ", got " + e.got());
  }
}

void add_tokenizer_option(CLI::App& app, std::string& model_dir) {
  app.add_option("-m,--model", model_dir,
                 "Model directory whose tokenizer files to use (default: the built-in GPT-2 vocabulary)");
}

Tokenizer tokenizer_for(const std::string& model_dir) {
  return model_dir.empty() ? Tokenizer::gpt2() : Tokenizer::for_model_directory(model_dir);
}

void add_invalid_utf8_option(CLI::App& app, std::string& mode) {
  app.add_option("--invalid-utf8", mode, "Input bytes that are not UTF-8: error or replace (with U+FFFD)")
      ->check(CLI::IsMember({"error", "replace"}))
      ->capture_default_str();
}

InvalidUtf8 invalid_utf8_mode(const std::string& mode) {
  return mode == "replace" ? InvalidUtf8::kReplace : InvalidUtf8::kError;
}

void write_stdout(std::string_view bytes, const char* what) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() || std::fflush(stdout) != 0)
    throw_error(ErrorCode::kIo, std::string("cannot write ") + what + " to standard output");
}

std::string read_text_file(const std::string& path, const char* flag) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    throw UsageError(std::string(flag) + ": cannot open '" + escape_for_message(path) + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw UsageError(std::string(flag) + ": '" + escape_for_message(path) + "' is " +
                     (S_ISDIR(st.st_mode) ? "a directory" : "not a regular file") + "; expected a text file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(std::string(flag) + ": cannot open '" + escape_for_message(path) + "': " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw_error(ErrorCode::kIo, std::string(flag) + ": cannot read '" + escape_for_message(path) + "'");
  return std::move(text).str();
}

bool stdout_is_tty() { return isatty(STDOUT_FILENO) == 1; }
bool stderr_is_tty() { return isatty(STDERR_FILENO) == 1; }

std::string read_all_stdin() {
  std::ios::sync_with_stdio(false);
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

void check_out_dir(const std::string& out_dir, bool force) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(out_dir, ec);
  if (ec && status.type() != fs::file_type::not_found) throw_error(ErrorCode::kIo, "--out " + out_dir + ": " + ec.message());
  if (status.type() == fs::file_type::not_found) return;
  if (status.type() != fs::file_type::directory) throw UsageError("--out " + out_dir + ": exists and is not a directory");
  // Temporaries an interrupted earlier write left (atomic_file.h) do not count: writing removes them.
  bool empty = true;
  for (const auto& entry : fs::directory_iterator(out_dir, ec))
    if (!io::is_eagerlm_temporary(entry.path().filename().string())) empty = false;
  if (ec) throw_error(ErrorCode::kIo, "--out " + out_dir + ": " + ec.message());
  if (!force && !empty)
    throw UsageError("--out " + out_dir + ": directory is not empty (--force replaces config.json and "
                     "model.safetensors in it, each only once its new version is complete)");
}

}  // namespace eagerlm::cli
