// Finding and reading a tokenizer's files in a model directory. Checked in this order, the first
// complete set wins: tokenizer.json (Hugging Face tokenizers), vocab.json + merges.txt (Hugging
// Face checkpoint), encoder.json + vocab.bpe (OpenAI release).
#pragma once

#include <optional>
#include <string>

#include "engine/tokenizer/vocab_parse.h"

namespace eagerlm {

struct VocabFiles {
  std::string vocab_path;   // tokenizer.json, vocab.json or encoder.json
  std::string merges_path;  // merges.txt or vocab.bpe; empty for tokenizer.json
};

// The tokenizer files in `dir`, or nullopt if it has none. Throws kIo if `dir` is not a
// directory, kInvalidFile if it has only half of a pair (e.g. vocab.json without merges.txt).
std::optional<VocabFiles> find_vocab_files(const std::string& dir);

// Reads and parses the files (syntax only; see vocab_build.h for the rest).
RawVocabulary read_vocab_files(const VocabFiles& files);

// The whole file as bytes; throws kIo naming the path.
std::string read_whole_file(const std::string& path);

}  // namespace eagerlm
