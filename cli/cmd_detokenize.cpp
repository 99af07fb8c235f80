// `eagerlm detokenize [-m DIR]`: token ids on standard input (separated by spaces, commas or
// newlines, or one JSON array) -> text on standard output. Bytes that do not form valid UTF-8
// become U+FFFD, as GPT-2's decoder does (errors="replace"). A token that is not an id of the
// vocabulary is an error naming it.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "engine/core/utf8.h"
#include "engine/tokenizer/token_ids.h"
#include "engine/tokenizer/tokenizer.h"

namespace eagerlm::cli {
namespace {

struct DetokenizeOptions {
  std::string model_dir;
};

int run_detokenize(const DetokenizeOptions& o) {
  const Tokenizer tok = tokenizer_for(o.model_dir);
  const std::vector<int32_t> ids = parse_token_ids(read_all_stdin(), tok.vocab_size(), "standard input");
  write_stdout(utf8::replace_invalid(tok.decode(ids)), "the text");
  return 0;
}

}  // namespace

Subcommand add_detokenize_command(CLI::App& root) {
  auto o = std::make_shared<DetokenizeOptions>();
  CLI::App* app = root.add_subcommand("detokenize", "GPT-2 token ids on standard input to text");
  add_tokenizer_option(*app, o->model_dir);
  return {app, [o] { return run_detokenize(*o); }};
}

}  // namespace eagerlm::cli
