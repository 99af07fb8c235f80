// Parsers for the three ways a GPT-2 vocabulary is stored: a token->id JSON object (Hugging Face
// `vocab.json`, OpenAI `encoder.json`), a merges text file (`merges.txt`, `vocab.bpe`) and a
// Hugging Face `tokenizers` file (`tokenizer.json`). They only check syntax and shape; meaning
// (ids, byte tokens, merges against the vocabulary) is checked when building, in vocab_build.h.
// Every error names the source and the line or entry.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace eagerlm {

struct RawToken {
  std::string text;  // as spelled in the file (byte-level stand-in characters for vocab entries)
  int64_t id;
};

struct RawMerge {
  std::string left, right;
  size_t position;  // 1-based line of a merges file, or 0-based index in tokenizer.json's list
};

struct RawVocabulary {
  std::string vocab_source;  // e.g. "/m/vocab.json", used in error messages
  std::vector<RawToken> vocab;
  std::string merges_source;   // e.g. "/m/merges.txt"
  bool merges_by_line = true;  // positions are file lines (else list indices)
  std::vector<RawMerge> merges;
  std::string added_source;     // tokenizer.json's added_tokens
  std::vector<RawToken> added;  // text is plain UTF-8, not byte-level spelled
};

// A JSON object mapping token strings to non-negative integer ids. Rejects other JSON shapes,
// non-integer values and repeated keys.
std::vector<RawToken> parse_vocab_json(std::string_view json_text, const std::string& source);

// One merge per line, "left right" (exactly two parts separated by one space). An optional first
// line starting with "#version" is skipped (as both OpenAI's and Hugging Face's code do); a
// "#version" line anywhere else is an error. A final newline, trailing blank lines and '\r'
// before '\n' are accepted; any other blank line is an error.
std::vector<RawMerge> parse_merges_text(std::string_view text, const std::string& source);

// A Hugging Face tokenizer.json with a byte-level BPE model: model.vocab, model.merges (each
// "a b" or ["a", "b"]) and added_tokens. Rejects models and options that would change results
// and that eagerlm does not implement (non-BPE models, a prefix space, subword affixes).
RawVocabulary parse_tokenizer_json(std::string_view json_text, const std::string& source);

// A token as it can be shown in a message: JSON-quoted, invalid UTF-8 replaced.
std::string quote_token(std::string_view token);

}  // namespace eagerlm
