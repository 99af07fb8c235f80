// libFuzzer target: the vocabulary parsers on arbitrary bytes. The first byte picks the format
// (vocab.json, merges.txt against the GPT-2 vocabulary, tokenizer.json). Any input must either
// load or throw eagerlm::Error; nothing else (crash, other exception, sanitizer report) is
// allowed.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "engine/core/error.h"
#include "engine/tokenizer/embedded_vocab.h"
#include "engine/tokenizer/vocab_build.h"
#include "engine/tokenizer/vocab_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    eagerlm::RawVocabulary raw;
    switch (data[0] % 3) {
      case 0:  // a fuzzed vocab.json with a one-merge merges list
        raw.vocab_source = "vocab.json";
        raw.vocab = eagerlm::parse_vocab_json(text, raw.vocab_source);
        raw.merges_source = "merges.txt";
        raw.merges = eagerlm::parse_merges_text("#version: 0.2\na b\n", raw.merges_source);
        break;
      case 1: {  // fuzzed merges against GPT-2's vocabulary (parsed once)
        static const std::vector<eagerlm::RawToken> gpt2_vocab =
            eagerlm::parse_vocab_json(eagerlm::embedded_gpt2_encoder_json(), "encoder.json");
        raw.vocab_source = "encoder.json";
        raw.vocab = gpt2_vocab;
        raw.merges_source = "merges.txt";
        raw.merges = eagerlm::parse_merges_text(text, raw.merges_source);
        break;
      }
      default: raw = eagerlm::parse_tokenizer_json(text, "tokenizer.json"); break;
    }
    eagerlm::build_tokenizer_data(raw, "fuzz");
  } catch (const eagerlm::Error&) {
    // rejected cleanly
  } catch (...) {
    std::abort();
  }
  return 0;
}
