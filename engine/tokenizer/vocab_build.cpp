// Validation and construction of the tokenizer tables from a parsed vocabulary.
#include "engine/tokenizer/vocab_build.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "engine/core/error.h"
#include "engine/core/utf8.h"
#include "engine/tokenizer/byte_unicode.h"

namespace eagerlm {
namespace {

// Limits (docs/formats.md): GPT-2's vocabulary has 50,257 tokens of at most 128 bytes.
constexpr int64_t kMaxVocabularySize = int64_t(1) << 24;
constexpr size_t kMaxTokenBytes = 1024;

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw_error(ErrorCode::kInvalidFile, source + ": " + what);
}

// Base vocabulary: every id in 0..size-1 used exactly once. Returns the entries by id.
std::vector<const RawToken*> index_base_vocab(const RawVocabulary& raw) {
  const size_t size = raw.vocab.size();
  if (size > size_t(kMaxVocabularySize))
    fail(raw.vocab_source, "has " + std::to_string(size) + " tokens, more than the " +
                               std::to_string(kMaxVocabularySize) + " eagerlm accepts (ids are int32, as in config.json)");
  for (const RawToken& t : raw.vocab)
    if (t.text.size() > kMaxTokenBytes)
      fail(raw.vocab_source, "token " + quote_token(t.text) + " is " + std::to_string(t.text.size()) +
                                 " bytes long, more than the " + std::to_string(kMaxTokenBytes) + " a token may be");
  std::vector<const RawToken*> by_id(size, nullptr);
  for (const RawToken& t : raw.vocab) {
    if (t.id < 0) fail(raw.vocab_source, "token " + quote_token(t.text) + " has negative id " + std::to_string(t.id));
    if (size_t(t.id) >= size)
      fail(raw.vocab_source, "token " + quote_token(t.text) + " has id " + std::to_string(t.id) + ", but with " +
                                 std::to_string(size) + " tokens the ids must be 0.." + std::to_string(size - 1) +
                                 " without gaps");
    if (by_id[t.id])
      fail(raw.vocab_source, "tokens " + quote_token(by_id[t.id]->text) + " and " + quote_token(t.text) +
                                 " both have id " + std::to_string(t.id));
    by_id[t.id] = &t;
  }
  return by_id;
}

// Added tokens (tokenizer.json) either repeat a base entry or extend the ids past it, without gaps.
void add_extra_tokens(const RawVocabulary& raw, TokenizerData& data) {
  const size_t base_size = data.token_bytes.size();
  std::vector<const RawToken*> extra;
  for (const RawToken& a : raw.added) {
    const std::string where = "token " + quote_token(a.text) + " with id " + std::to_string(a.id);
    if (size_t(a.id) < base_size) {
      if (data.token_bytes[a.id] != a.text)
        fail(raw.added_source,
             where + " differs from the vocabulary's token " + quote_token(data.token_bytes[a.id]) + " with that id");
    } else {
      if (size_t(a.id) >= base_size + raw.added.size())
        fail(raw.added_source, where + " leaves a gap after the vocabulary's last id " + std::to_string(base_size - 1));
      extra.resize(std::max(extra.size(), size_t(a.id) - base_size + 1), nullptr);
      const RawToken*& slot = extra[a.id - base_size];
      if (slot && slot->text != a.text)
        fail(raw.added_source, "tokens " + quote_token(slot->text) + " and " + quote_token(a.text) + " both have id " +
                                   std::to_string(a.id));
      slot = &a;
    }
  }
  for (size_t i = 0; i < extra.size(); ++i) {
    if (!extra[i])
      fail(raw.added_source, "no token has id " + std::to_string(base_size + i) + "; ids must not have gaps");
    data.token_bytes.push_back(extra[i]->text);
  }
  for (const RawToken& a : raw.added) data.special_tokens.emplace_back(a.text, int32_t(a.id));
}

std::string byte_hex(int b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02X", b);
  return buf;
}

}  // namespace

std::shared_ptr<const TokenizerData> build_tokenizer_data(const RawVocabulary& raw, std::string source) {
  auto data = std::make_shared<TokenizerData>();
  data->source = std::move(source);

  const std::vector<const RawToken*> by_id = index_base_vocab(raw);
  const int32_t base_size = int32_t(by_id.size());

  // Vocabulary entries are spelled in stand-in characters; anything else is taken literally.
  std::unordered_map<std::string_view, int32_t> id_of_spelling;
  id_of_spelling.reserve(by_id.size());
  data->token_bytes.resize(by_id.size());
  std::string bytes;
  for (int32_t id = 0; id < base_size; ++id) {
    const std::string& spelled = by_id[id]->text;
    if (spelled.empty()) fail(raw.vocab_source, "token with id " + std::to_string(id) + " is empty");
    data->token_bytes[id] = byte_level_decode(spelled, bytes) ? bytes : spelled;
    id_of_spelling.emplace(spelled, id);
  }

  for (int b = 0; b < 256; ++b) {
    std::string spelled;
    utf8::append(spelled, byte_to_unicode(uint8_t(b)));
    const auto it = id_of_spelling.find(spelled);
    if (it == id_of_spelling.end())
      fail(raw.vocab_source, "has no token for byte " + byte_hex(b) + " (spelled " + quote_token(spelled) +
                                 "); a byte-level vocabulary needs all 256 single-byte tokens");
    data->byte_token[b] = it->second;
  }

  if (const auto it = id_of_spelling.find(kEndOfText); it != id_of_spelling.end()) {
    if (it->second != base_size - 1)
      fail(raw.vocab_source, "token \"<|endoftext|>\" has id " + std::to_string(it->second) +
                                 "; GPT-2 vocabularies put it last, at id " + std::to_string(base_size - 1));
    data->eos_id = it->second;
    data->special_tokens.emplace_back(std::string(kEndOfText), it->second);
  }

  const char* position_word = raw.merges_by_line ? "line " : "entry ";
  data->merges.reserve(raw.merges.size());
  std::string joined;
  for (size_t rank = 0; rank < raw.merges.size(); ++rank) {
    const RawMerge& m = raw.merges[rank];
    const auto missing = [&](const std::string& token) {
      fail(raw.merges_source, position_word + std::to_string(m.position) + ": merge " +
                                  quote_token(m.left + " " + m.right) + " needs token " + quote_token(token) +
                                  ", which is not in the vocabulary " + raw.vocab_source);
    };
    const auto left = id_of_spelling.find(m.left);
    if (left == id_of_spelling.end()) missing(m.left);
    const auto right = id_of_spelling.find(m.right);
    if (right == id_of_spelling.end()) missing(m.right);
    joined = m.left;
    joined += m.right;
    const auto merged = id_of_spelling.find(joined);
    if (merged == id_of_spelling.end()) missing(joined);
    data->merges.insert(left->second, right->second, int32_t(rank), merged->second);
  }

  add_extra_tokens(raw, *data);
  if (data->eos_id < 0)
    for (const auto& [text, id] : data->special_tokens)
      if (text == kEndOfText) data->eos_id = id;

  // Longest first so that a special token that contains another one wins; drop repeats.
  auto& specials = data->special_tokens;
  std::sort(specials.begin(), specials.end(), [](const auto& a, const auto& b) {
    if (a.first.size() != b.first.size()) return a.first.size() > b.first.size();
    return a < b;
  });
  specials.erase(std::unique(specials.begin(), specials.end()), specials.end());
  return data;
}

}  // namespace eagerlm
