// `eagerlm`: the command line. Parses the subcommand, runs it, and is the only place where
// errors become exit codes: 2 for usage errors (unknown or malformed flags, values out of
// range), 1 for every other failure, each reported as one line on standard error.
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "eagerlm/version.h"
#include "engine/core/error.h"

int main(int argc, char** argv) {
  using namespace eagerlm::cli;
  CLI::App root{"eagerlm: GPT-2 inference engine (CPU and CUDA)", "eagerlm"};
  root.set_version_flag("--version", "eagerlm " EAGERLM_VERSION_STRING);
  root.require_subcommand(1);
  root.fallthrough(false);

  std::vector<Subcommand> commands = {
      add_info_command(root),       add_init_command(root),     add_generate_command(root),
      add_perplexity_command(root), add_tokenize_command(root), add_detokenize_command(root),
      add_bench_command(root),      add_quantize_command(root), add_serve_command(root),
  };

  // CLI11 would only say "a subcommand is required"; name the word it did not know.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const auto& cmd : commands) {
      known = known || cmd.app->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + cmd.app->get_name();
    }
    if (!known) {
      std::cerr << "eagerlm: unknown command '" << argv[1] << "' (expected one of: " << names << ")\n";
      return 2;
    }
  }

  try {
    root.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return root.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return root.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return root.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "eagerlm: " << e.what() << "\n";
    std::cerr << "Run with --help for usage.\n";
    return 2;
  }

  try {
    for (const auto& cmd : commands)
      if (cmd.app->parsed()) return cmd.run();
  } catch (const UsageError& e) {
    std::cerr << "eagerlm: " << e.what() << "\n";
    return 2;
  } catch (const eagerlm::Error& e) {
    std::cerr << "eagerlm: error: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "eagerlm: error: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "eagerlm: error: " << e.what() << "\n";
    return 1;
  }
  return 2;
}
