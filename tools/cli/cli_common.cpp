#include "tools/cli/cli_common.h"

#include <unistd.h>

#include <charconv>

#include <iostream>
#include <iterator>

#include "engine/core/threads.h"
#include "tools/cli/command.h"

namespace eagerlm::cli {

void add_threads_option(CLI::App& app, int& threads) {
  const int max_threads = hardware_threads() * 4;
  app.add_option("-t,--threads", threads, "CPU threads (default: all cores)")
      ->check(CLI::Range(1, max_threads));
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

bool stdout_is_tty() { return isatty(STDOUT_FILENO) == 1; }
bool stderr_is_tty() { return isatty(STDERR_FILENO) == 1; }

std::string read_all_stdin() {
  std::ios::sync_with_stdio(false);
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

}  // namespace eagerlm::cli
