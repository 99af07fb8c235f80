// libFuzzer target: the body of POST /v1/completions, as the server reads it (strict JSON, then
// every field checked and translated to GenerateOptions). Any input must give a request within
// the served model's limits or an ApiError 400/404 with a one-line message; never a crash, another
// exception, or a JSON library message that escapes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "eagerlm/model.hpp"
#include "fuzz/fuzz_support.h"
#include "server/api_error.h"
#include "server/completion_request.h"
#include "server/json_body.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

// One layer of width 8 over GPT-2's vocabulary, 64 positions: the limits are what matters.
const eagerlm::Model& model() {
  static const eagerlm::Model m = eagerlm::Model::initialize(eagerlm::fuzz::write_scratch(
      "config.json", R"({"n_layer": 1, "n_embd": 8, "n_head": 2, "n_positions": 64, "vocab_size": 50257})"));
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace eagerlm::server;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  ServedModel served;
  served.id = "tiny";
  served.context_length = 64;
  served.vocab_size = 50257;
  served.slots = 4;
  served.eos_token_id = 50256;
  try {
    const CompletionRequest r = parse_completion_request(parse_json_object(body), served, model());
    check(!r.prompts.empty() && r.prompts.size() == r.prompt_texts.size());
    check(r.options.n >= 1 && r.options.n <= served.slots && r.choice_count() <= kMaxChoices);
    for (const auto& ids : r.prompts) {
      check(!ids.empty() && ids.size() + r.options.max_new_tokens <= served.context_length);
      for (const int32_t id : ids) check(id >= 0 && size_t(id) < served.vocab_size);
    }
  } catch (const ApiError& e) {
    const std::string_view message = e.what();
    check((e.status == 400 || e.status == 404) && !message.empty() && message.find('\n') == std::string_view::npos);
    check(!error_body(e).empty());
  } catch (...) {
    std::abort();
  }
  return 0;
}
