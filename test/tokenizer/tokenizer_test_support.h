// Helpers shared by the tokenizer tests: the shared GPT-2 data files, the test cases, temporary
// directories, and small independent references (GPT-2's byte-to-character table written the
// way OpenAI's encoder.py builds it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "test/support/temp_dir.h"

namespace eagerlm::test {

struct TokenizerCase {
  std::string text;
  std::vector<int32_t> ids;
};

std::string gpt2_data_path(const std::string& file);  // ../shared/data/gpt2-tokenizer/<file>
std::string read_file(const std::string& path);
void write_file(const std::filesystem::path& path, const std::string& contents);
const std::vector<TokenizerCase>& gpt2_cases();  // cases.jsonl

// The 256-entry table from OpenAI's bytes_to_unicode(), as UTF-8 strings, built independently of
// the library (printable ranges keep their code points, the rest get 256, 257, ... in order).
const std::vector<std::string>& reference_byte_spelling();

// UTF-8 per Unicode's Table 3-7 of well-formed byte sequences, written as that table: the unit
// at s[i] is (length, true) for a well-formed character, else (length of the maximal subpart, at
// least 1, false); reference_replace turns each maximal subpart into U+FFFD.
std::pair<size_t, bool> reference_unit(const std::string& s, size_t i);
std::string reference_replace(const std::string& s);

}  // namespace eagerlm::test
