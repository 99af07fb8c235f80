// Tokenizer file discovery and reading.
#include "engine/tokenizer/vocab_files.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/core/error.h"
#include "engine/io/mapped_file.h"

namespace eagerlm {
namespace fs = std::filesystem;

// GPT-2's tokenizer.json is 1.4 MB; the largest public ones (Gemma's) are about 35 MB.
constexpr size_t kMaxTokenizerFileBytes = size_t(256) << 20;

std::string read_whole_file(const std::string& path) { return io::read_file_limited(path, kMaxTokenizerFileBytes); }

namespace {

// Whether `name` in `dir` is a tokenizer file. Only a name that does not exist at all means "not
// there": anything else under that name (a directory, a dangling or looping symbolic link, a FIFO,
// a device) is an error, so that a partly downloaded model does not fall back silently to GPT-2's
// built-in vocabulary.
bool has_file(const std::string& dir, const char* name) {
  const fs::path path = fs::path(dir) / name;
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(path, ec);
  if (link.type() == fs::file_type::not_found) return false;
  if (ec) throw_error(ErrorCode::kIo, path.string() + ": cannot inspect: " + ec.message());
  const fs::file_status target = fs::status(path, ec);
  if (target.type() == fs::file_type::regular) return true;
  std::string what = "is not a regular file";
  if (target.type() == fs::file_type::not_found) what = "is a symbolic link to something that does not exist";
  else if (target.type() == fs::file_type::directory) what = "is a directory";
  else if (ec) what = "cannot be followed: " + ec.message();
  throw_error(ErrorCode::kIo, path.string() + " " + what + "; a tokenizer file of that name must be a readable file");
}

}  // namespace

std::optional<VocabFiles> find_vocab_files(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw_error(ErrorCode::kIo, "model directory " + dir + " does not exist or is not a directory");
  const auto path = [&](const char* name) { return (fs::path(dir) / name).string(); };

  if (has_file(dir, "tokenizer.json")) return VocabFiles{path("tokenizer.json"), ""};
  const std::pair<const char*, const char*> pairs[] = {{"vocab.json", "merges.txt"}, {"encoder.json", "vocab.bpe"}};
  for (const auto& [vocab, merges] : pairs) {
    const bool has_vocab = has_file(dir, vocab), has_merges = has_file(dir, merges);
    if (has_vocab && has_merges) return VocabFiles{path(vocab), path(merges)};
    if (has_vocab != has_merges)
      throw_error(ErrorCode::kInvalidFile, dir + " has " + (has_vocab ? vocab : merges) + " but not " +
                                               (has_vocab ? merges : vocab) + "; the tokenizer needs both");
  }
  return std::nullopt;
}

RawVocabulary read_vocab_files(const VocabFiles& files) {
  if (files.merges_path.empty()) return parse_tokenizer_json(read_whole_file(files.vocab_path), files.vocab_path);
  RawVocabulary raw;
  raw.vocab_source = files.vocab_path;
  raw.vocab = parse_vocab_json(read_whole_file(files.vocab_path), files.vocab_path);
  raw.merges_source = files.merges_path;
  raw.merges = parse_merges_text(read_whole_file(files.merges_path), files.merges_path);
  return raw;
}

}  // namespace eagerlm
