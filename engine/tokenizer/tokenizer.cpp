// Tokenizer: loading, encoding (validate, split off special tokens, pre-tokenize, cached BPE) and
// decoding.
#include "engine/tokenizer/tokenizer.h"

#include "engine/core/error.h"
#include "engine/core/utf8.h"
#include "engine/tokenizer/bpe.h"
#include "engine/tokenizer/embedded_vocab.h"
#include "engine/tokenizer/pretokenizer.h"
#include "engine/tokenizer/tokenizer_data.h"
#include "engine/tokenizer/vocab_build.h"
#include "engine/tokenizer/vocab_files.h"
#include "engine/tokenizer/word_cache.h"

namespace eagerlm {
namespace {

// Appends the ids of text that has no special tokens in it.
void encode_ordinary(std::string_view text, const TokenizerData& data, WordCache& cache, BpeScratch& scratch,
                     std::vector<int32_t>& ids) {
  PreTokenizer pieces(text);
  std::string_view piece;
  while (pieces.next(piece)) {
    if (piece.size() == 1) {
      ids.push_back(data.byte_token[static_cast<unsigned char>(piece[0])]);
      continue;
    }
    if (cache.lookup(piece, ids)) continue;
    const size_t first = ids.size();
    bpe_encode(piece, data.byte_token, data.merges, scratch, ids);
    cache.store(piece, ids.data() + first, ids.size() - first);
  }
}

// Splits at special tokens: the leftmost occurrence wins, the longest one at equal positions
// (special_tokens is sorted longest first). Each token's next occurrence is remembered, so the
// text is searched O(number of special tokens) times in total, not once per occurrence.
void encode_with_specials(std::string_view text, const TokenizerData& data, WordCache& cache, BpeScratch& scratch,
                          std::vector<int32_t>& ids) {
  const auto& specials = data.special_tokens;
  std::vector<size_t> next_at(specials.size(), 0);
  for (size_t i = 0; i < specials.size(); ++i) next_at[i] = text.find(specials[i].first);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t best = std::string_view::npos, best_index = 0;
    for (size_t i = 0; i < specials.size(); ++i) {
      if (next_at[i] != std::string_view::npos && next_at[i] < pos) next_at[i] = text.find(specials[i].first, pos);
      if (next_at[i] < best) {
        best = next_at[i];
        best_index = i;
      }
    }
    if (best == std::string_view::npos) break;
    encode_ordinary(text.substr(pos, best - pos), data, cache, scratch, ids);
    ids.push_back(specials[best_index].second);
    pos = best + specials[best_index].first.size();
  }
  if (pos < text.size()) encode_ordinary(text.substr(pos), data, cache, scratch, ids);
}

}  // namespace

Tokenizer::Tokenizer(std::shared_ptr<const TokenizerData> data)
    : data_(std::move(data)), cache_owner_(WordCache::new_owner_id()) {}

Tokenizer Tokenizer::gpt2() {
  // Built once; every gpt2() shares the tables and the warm per-thread caches.
  static const Tokenizer shared = [] {
    RawVocabulary raw;
    raw.vocab_source = "embedded GPT-2 encoder.json";
    raw.vocab = parse_vocab_json(embedded_gpt2_encoder_json(), raw.vocab_source);
    raw.merges_source = "embedded GPT-2 vocab.bpe";
    raw.merges = parse_merges_text(embedded_gpt2_vocab_bpe(), raw.merges_source);
    return Tokenizer(build_tokenizer_data(raw, "embedded GPT-2 vocabulary"));
  }();
  return shared;
}

Tokenizer Tokenizer::from_files(const std::string& vocab_path, const std::string& merges_path) {
  const RawVocabulary raw = read_vocab_files({vocab_path, merges_path});
  std::string source = merges_path.empty() ? vocab_path : vocab_path + " + " + merges_path;
  return Tokenizer(build_tokenizer_data(raw, std::move(source)));
}

Tokenizer Tokenizer::from_directory(const std::string& dir) {
  const std::optional<VocabFiles> files = find_vocab_files(dir);
  if (!files)
    throw_error(ErrorCode::kInvalidFile, dir +
                                             " has no tokenizer files (expected tokenizer.json, "
                                             "vocab.json + merges.txt, or encoder.json + vocab.bpe)");
  return from_files(files->vocab_path, files->merges_path);
}

Tokenizer Tokenizer::for_model_directory(const std::string& dir) {
  const std::optional<VocabFiles> files = find_vocab_files(dir);
  return files ? from_files(files->vocab_path, files->merges_path) : gpt2();
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, const EncodeOptions& options) const {
  std::string replaced;
  if (const size_t bad = utf8::first_invalid_offset(text); bad != std::string_view::npos) {
    if (options.invalid_utf8 == InvalidUtf8::kError)
      throw_error(ErrorCode::kInvalidArgument, "text is not valid UTF-8: " + utf8::describe_invalid(text, bad));
    replaced = utf8::replace_invalid(text);
    text = replaced;
  }
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 1);
  BpeScratch scratch;
  WordCache& cache = WordCache::for_thread(cache_owner_);
  if (options.parse_special && !data_->special_tokens.empty())
    encode_with_specials(text, *data_, cache, scratch, ids);
  else
    encode_ordinary(text, *data_, cache, scratch, ids);
  return ids;
}

std::string Tokenizer::decode(const int32_t* ids, size_t count) const {
  size_t total = 0;
  for (size_t i = 0; i < count; ++i) {
    if (ids[i] < 0 || ids[i] >= vocab_size())
      throw_error(ErrorCode::kInvalidArgument, "token id " + std::to_string(ids[i]) + " at position " +
                                                   std::to_string(i) + " is not in the vocabulary (ids 0.." +
                                                   std::to_string(vocab_size() - 1) + ")");
    total += data_->token_bytes[ids[i]].size();
  }
  std::string bytes;
  bytes.reserve(total);
  for (size_t i = 0; i < count; ++i) bytes += data_->token_bytes[ids[i]];
  return bytes;
}

const std::string& Tokenizer::token_bytes(int32_t id) const {
  if (id < 0 || id >= vocab_size())
    throw_error(ErrorCode::kInvalidArgument, "token id " + std::to_string(id) + " is not in the vocabulary (ids 0.." +
                                                 std::to_string(vocab_size() - 1) + ")");
  return data_->token_bytes[id];
}

int32_t Tokenizer::vocab_size() const { return int32_t(data_->token_bytes.size()); }
int32_t Tokenizer::eos_id() const { return data_->eos_id; }
const std::vector<std::pair<std::string, int32_t>>& Tokenizer::special_tokens() const { return data_->special_tokens; }
const std::string& Tokenizer::source() const { return data_->source; }

bool Tokenizer::is_builtin() const { return data_ == gpt2().data_; }

}  // namespace eagerlm
