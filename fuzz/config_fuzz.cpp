// libFuzzer target: config.json. Any input must give a valid Config (every field in range) or
// an eagerlm::Error, one line; never a crash, a recursion without limit, a JSON library message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "models/gpt2/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  eagerlm::fuzz::expect_clean([&] {
    const eagerlm::gpt2::Config c = eagerlm::gpt2::config_from_json(std::string(text), "config.json");
    c.validate("config.json");  // what came back is valid by the same rules
    // An eos_token_id at or past vocab_size is kept as given (HF's small configs write 50256; such a
    // model never emits it, docs/formats.md), so only its sign is a rule.
    if (c.eos_token_id < 0 || c.n_embd % c.n_head != 0) std::abort();
    (void)c.to_json();
  });
  return 0;
}
