// libFuzzer target: encode and decode arbitrary bytes with the embedded GPT-2 tokenizer.
// The first input byte picks the options; the rest is the text (or, with bit 2, token ids).
// Besides "no crash, no sanitizer report" it checks the contracts:
//  - invalid UTF-8 throws kInvalidArgument in error mode, and only then;
//  - decode(encode(text)) == text (== its U+FFFD-replaced form in replace mode);
//  - StreamDecoder emits valid UTF-8 chunks that add up to the replaced decoding;
//  - decode of arbitrary ids throws exactly when one is out of range.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/utf8.h"
#include "engine/tokenizer/tokenizer.h"

namespace {

using eagerlm::StreamDecoder;
using eagerlm::Tokenizer;

void check(bool ok) {
  if (!ok) std::abort();
}

bool valid_utf8(std::string_view s) { return eagerlm::utf8::first_invalid_offset(s) == std::string_view::npos; }

void check_stream(const Tokenizer& tok, const std::vector<int32_t>& ids, const std::string& bytes) {
  StreamDecoder stream(tok);
  std::string streamed;
  for (int32_t id : ids) {
    const std::string chunk = stream.push(id);
    check(valid_utf8(chunk));
    streamed += chunk;
  }
  streamed += stream.finish();
  check(streamed == eagerlm::utf8::replace_invalid(bytes));
}

void fuzz_text(const Tokenizer& tok, uint8_t mode, std::string_view text) {
  eagerlm::EncodeOptions options;
  options.parse_special = (mode & 1) != 0;
  options.invalid_utf8 = (mode & 2) ? eagerlm::InvalidUtf8::kReplace : eagerlm::InvalidUtf8::kError;
  const bool valid = valid_utf8(text);
  std::vector<int32_t> ids;
  try {
    ids = tok.encode(text, options);
  } catch (const eagerlm::Error& e) {
    check(!valid && options.invalid_utf8 == eagerlm::InvalidUtf8::kError);
    check(e.code() == eagerlm::ErrorCode::kInvalidArgument);
    return;
  }
  check(valid || options.invalid_utf8 == eagerlm::InvalidUtf8::kReplace);
  const std::string expected = valid ? std::string(text) : eagerlm::utf8::replace_invalid(text);
  const std::string decoded = tok.decode(ids);
  check(decoded == expected);
  check_stream(tok, ids, decoded);
}

void fuzz_ids(const Tokenizer& tok, std::string_view bytes) {
  std::vector<int32_t> ids;
  bool in_range = true;
  for (size_t i = 0; i + 1 < bytes.size(); i += 2) {
    const int32_t id = int32_t(uint8_t(bytes[i]) | (uint8_t(bytes[i + 1]) << 8)) - 1000;  // some < 0
    in_range = in_range && id >= 0 && id < tok.vocab_size();
    ids.push_back(id);
  }
  std::string decoded;
  try {
    decoded = tok.decode(ids);
  } catch (const eagerlm::Error& e) {
    check(!in_range && e.code() == eagerlm::ErrorCode::kInvalidArgument);
    return;
  }
  check(in_range);
  check_stream(tok, ids, decoded);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Tokenizer tok = Tokenizer::gpt2();
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (mode & 4)
    fuzz_ids(tok, rest);
  else
    fuzz_text(tok, mode, rest);
  return 0;
}
