// The GPT-2 vocabulary that ships inside eagerlm (engine/tokenizer/data/, OpenAI's files, MIT
// License), linked into the library so that the default tokenizer needs no file at run time.
#pragma once

#include <string_view>

namespace eagerlm {

std::string_view embedded_gpt2_encoder_json();  // token -> id, as encoder.json
std::string_view embedded_gpt2_vocab_bpe();     // merges in rank order, as vocab.bpe

}  // namespace eagerlm
