// Tokenizer file discovery and reading.
#include "engine/tokenizer/vocab_files.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/core/error.h"

namespace eagerlm {
namespace fs = std::filesystem;

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_error(ErrorCode::kIo, "cannot open " + path + ": " + std::strerror(errno));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) throw_error(ErrorCode::kIo, "cannot read " + path);
  return std::move(contents).str();
}

std::optional<VocabFiles> find_vocab_files(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw_error(ErrorCode::kIo, "model directory " + dir + " does not exist or is not a directory");
  const auto has = [&](const char* name) { return fs::is_regular_file(fs::path(dir) / name, ec); };
  const auto path = [&](const char* name) { return (fs::path(dir) / name).string(); };

  if (has("tokenizer.json")) return VocabFiles{path("tokenizer.json"), ""};
  const std::pair<const char*, const char*> pairs[] = {{"vocab.json", "merges.txt"}, {"encoder.json", "vocab.bpe"}};
  for (const auto& [vocab, merges] : pairs)
    if (has(vocab) && has(merges)) return VocabFiles{path(vocab), path(merges)};
  for (const auto& [vocab, merges] : pairs) {
    if (has(vocab) != has(merges))
      throw_error(ErrorCode::kInvalidFile, dir + " has " + (has(vocab) ? vocab : merges) + " but not " +
                                               (has(vocab) ? merges : vocab) + "; the tokenizer needs both");
  }
  return std::nullopt;
}

RawVocabulary read_vocab_files(const VocabFiles& files) {
  if (files.merges_path.empty())
    return parse_tokenizer_json(read_whole_file(files.vocab_path), files.vocab_path);
  RawVocabulary raw;
  raw.vocab_source = files.vocab_path;
  raw.vocab = parse_vocab_json(read_whole_file(files.vocab_path), files.vocab_path);
  raw.merges_source = files.merges_path;
  raw.merges = parse_merges_text(read_whole_file(files.merges_path), files.merges_path);
  return raw;
}

}  // namespace eagerlm
