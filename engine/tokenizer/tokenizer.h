// GPT-2's byte-level BPE tokenizer: text in, token ids out, and back, with the same ids as
// OpenAI's encoder. The GPT-2 vocabulary is built in (Tokenizer::gpt2()); a model directory can
// bring its own in any of the usual file formats (see vocab_files.h).
//
// A Tokenizer is a cheap handle (a shared pointer) to immutable tables; its word cache is
// per thread (word_cache.h). Copy it freely, and call encode/decode on one const Tokenizer from
// many threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/core/error.h"  // what encode/decode/loading throw

namespace eagerlm {

struct TokenizerData;

enum class InvalidUtf8 {
  kError,    // throw kInvalidArgument naming the byte offset of the first bad byte
  kReplace,  // replace each ill-formed sequence with U+FFFD first (Python's errors="replace")
};

struct EncodeOptions {
  // When false (the default), "<|endoftext|>" in the text is ordinary text and encodes as
  // several pieces, as in GPT-2's own encoder. When true, special tokens in the text encode as
  // their single ids.
  bool parse_special = false;
  InvalidUtf8 invalid_utf8 = InvalidUtf8::kError;
};

class Tokenizer {
 public:
  // The embedded GPT-2 vocabulary (50,257 ids). Parsed on the first call, shared afterwards.
  static Tokenizer gpt2();
  // The tokenizer files in `dir`; throws kIo if `dir` is not a directory, kInvalidFile if it has
  // no tokenizer files or they are malformed (naming the file and line or entry).
  static Tokenizer from_directory(const std::string& dir);
  // The tokenizer files in `dir` if it has any, else gpt2(). Malformed files still throw.
  static Tokenizer for_model_directory(const std::string& dir);
  // Explicit files: vocab.json/encoder.json + merges.txt/vocab.bpe, or tokenizer.json alone
  // (merges_path empty).
  static Tokenizer from_files(const std::string& vocab_path, const std::string& merges_path = "");

  // Token ids for UTF-8 text. Throws kInvalidArgument for invalid UTF-8 unless told to replace.
  std::vector<int32_t> encode(std::string_view text, const EncodeOptions& options = {}) const;

  // The bytes the ids stand for, concatenated (not necessarily valid UTF-8: a character may be
  // split across tokens). Throws kInvalidArgument for an id outside 0..vocab_size()-1.
  std::string decode(const int32_t* ids, size_t count) const;
  std::string decode(const std::vector<int32_t>& ids) const { return decode(ids.data(), ids.size()); }

  // The raw bytes of one token; throws kInvalidArgument for an unknown id.
  const std::string& token_bytes(int32_t id) const;
  int32_t vocab_size() const;
  // Id of "<|endoftext|>" (50256 for GPT-2), or -1 if the vocabulary has none.
  int32_t eos_id() const;
  // The strings parse_special recognizes, with their ids, longest first.
  const std::vector<std::pair<std::string, int32_t>>& special_tokens() const;
  // Where the vocabulary came from: "embedded GPT-2 vocabulary" or the file path(s).
  const std::string& source() const;
  // True for gpt2()'s built-in vocabulary (also when for_model_directory fell back to it).
  bool is_builtin() const;

 private:
  explicit Tokenizer(std::shared_ptr<const TokenizerData> data);

  std::shared_ptr<const TokenizerData> data_;
  uint64_t cache_owner_;  // names this tokenizer's per-thread word caches; shared by copies
};

// Turns ids into text one token at a time, for printing while generating. Never splits a UTF-8
// character: bytes of an incomplete character are held back until a later token completes it.
// Ill-formed bytes become U+FFFD, so all output is valid UTF-8, and the concatenated output of
// push() calls and finish() equals Python's decode(errors="replace") of Tokenizer::decode(ids).
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tokenizer);

  // The text that `id` completes (possibly empty). Throws kInvalidArgument for an unknown id,
  // leaving the decoder as it was.
  std::string push(int32_t id);
  // Flushes held-back bytes (an incomplete character becomes one U+FFFD) and starts afresh.
  std::string finish();

 private:
  Tokenizer tokenizer_;
  std::string pending_;  // bytes not yet returned: at most an incomplete character
};

}  // namespace eagerlm
