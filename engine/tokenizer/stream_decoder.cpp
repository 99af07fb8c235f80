// StreamDecoder: token-by-token decoding that holds back incomplete UTF-8 characters.
#include "engine/core/utf8.h"
#include "engine/tokenizer/tokenizer.h"

namespace eagerlm {

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}

std::string StreamDecoder::push(int32_t id) {
  pending_ += tokenizer_.token_bytes(id);  // throws before changing anything for a bad id

  std::string out;
  const auto* p = reinterpret_cast<const unsigned char*>(pending_.data());
  const size_t n = pending_.size();
  size_t i = 0;
  while (i < n) {
    const utf8::Decoded d = utf8::decode(p + i, n - i);
    if (d.status == utf8::Status::kTruncated) break;  // may still be completed by the next token
    if (d.status == utf8::Status::kValid)
      out.append(pending_, i, d.length);
    else
      out.append(utf8::kReplacementCharacter);
    i += d.length;
  }
  pending_.erase(0, i);
  return out;
}

std::string StreamDecoder::finish() {
  std::string out = utf8::replace_invalid(pending_);
  pending_.clear();
  return out;
}

}  // namespace eagerlm
