// Every subcommand of `eagerlm`, in the order `eagerlm --help` lists them. Each is defined in
// its own cli/cmd_<name>.cpp.
#pragma once

#include "cli/command.h"

namespace eagerlm::cli {

Subcommand add_info_command(CLI::App& root);
Subcommand add_init_command(CLI::App& root);
Subcommand add_generate_command(CLI::App& root);
Subcommand add_perplexity_command(CLI::App& root);
Subcommand add_tokenize_command(CLI::App& root);
Subcommand add_detokenize_command(CLI::App& root);
Subcommand add_bench_command(CLI::App& root);
Subcommand add_quantize_command(CLI::App& root);
Subcommand add_serve_command(CLI::App& root);

}  // namespace eagerlm::cli
