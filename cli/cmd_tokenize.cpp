// `eagerlm tokenize [-m DIR] [--json] [--parse-special] [--invalid-utf8 error|replace]`: all of
// standard input as UTF-8 text -> token ids on standard output, space-separated on one line (or
// one JSON array). Nothing else goes to standard output.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "engine/tokenizer/tokenizer.h"

namespace eagerlm::cli {
namespace {

struct TokenizeOptions {
  std::string model_dir;
  bool json = false;
  bool parse_special = false;
  std::string invalid_utf8 = "error";
};

int run_tokenize(const TokenizeOptions& o) {
  const Tokenizer tok = tokenizer_for(o.model_dir);
  EncodeOptions options;
  options.parse_special = o.parse_special;
  options.invalid_utf8 = invalid_utf8_mode(o.invalid_utf8);

  const std::string text = read_all_stdin();
  std::vector<int32_t> ids;
  try {
    ids = tok.encode(text, options);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kInvalidArgument) throw;
    throw Error(e.code(), std::string("standard input: ") + e.what() +
                              " (--invalid-utf8 replace turns invalid bytes into U+FFFD)");
  }

  const char separator = o.json ? ',' : ' ';
  std::string line = o.json ? "[" : "";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) line += separator;
    line += std::to_string(ids[i]);
  }
  line += o.json ? "]\n" : "\n";
  write_stdout(line, "the token ids");
  return 0;
}

}  // namespace

Subcommand add_tokenize_command(CLI::App& root) {
  auto o = std::make_shared<TokenizeOptions>();
  CLI::App* app = root.add_subcommand("tokenize", "Text on standard input to GPT-2 token ids");
  add_tokenizer_option(*app, o->model_dir);
  app->add_flag("--json", o->json, "Print one JSON array");
  app->add_flag("--parse-special", o->parse_special, "Encode <|endoftext|> in the text as the special token");
  add_invalid_utf8_option(*app, o->invalid_utf8);
  return {app, [o] { return run_tokenize(*o); }};
}

}  // namespace eagerlm::cli
