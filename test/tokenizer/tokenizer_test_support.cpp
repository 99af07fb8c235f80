// Implementation of the shared tokenizer test helpers.
#include "test/tokenizer/tokenizer_test_support.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace eagerlm::test {

std::string gpt2_data_path(const std::string& file) {
  return std::string(EAGERLM_SHARED_DIR) + "/data/gpt2-tokenizer/" + file;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("test: cannot open " + path);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

void write_file(const std::filesystem::path& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
  if (!out) throw std::runtime_error("test: cannot write " + path.string());
}

const std::vector<TokenizerCase>& gpt2_cases() {
  static const std::vector<TokenizerCase> cases = [] {
    std::vector<TokenizerCase> result;
    std::istringstream lines(read_file(gpt2_data_path("cases.jsonl")));
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty()) continue;
      const auto j = nlohmann::json::parse(line);
      result.push_back({j.at("text").get<std::string>(), j.at("ids").get<std::vector<int32_t>>()});
    }
    return result;
  }();
  return cases;
}

const std::vector<std::string>& reference_byte_spelling() {
  static const std::vector<std::string> table = [] {
    std::vector<int> printable;
    for (int b = '!'; b <= '~'; ++b) printable.push_back(b);
    for (int b = 0xA1; b <= 0xAC; ++b) printable.push_back(b);
    for (int b = 0xAE; b <= 0xFF; ++b) printable.push_back(b);
    std::vector<int> code_point(256, -1);
    for (int b : printable) code_point[b] = b;
    int n = 0;
    for (int b = 0; b < 256; ++b)
      if (code_point[b] < 0) code_point[b] = 256 + n++;
    std::vector<std::string> spelled(256);
    for (int b = 0; b < 256; ++b) {
      const int cp = code_point[b];  // all below U+0800: one or two UTF-8 bytes
      if (cp < 0x80) {
        spelled[b] = std::string(1, char(cp));
      } else {
        spelled[b] += char(0xC0 | (cp >> 6));
        spelled[b] += char(0x80 | (cp & 0x3F));
      }
    }
    return spelled;
  }();
  return table;
}

namespace {
struct Range {
  unsigned lo, hi;
};
// Unicode Table 3-7, one row per kind of well-formed sequence.
const std::vector<std::vector<Range>> kWellFormed = {
    {{0x00, 0x7F}},
    {{0xC2, 0xDF}, {0x80, 0xBF}},
    {{0xE0, 0xE0}, {0xA0, 0xBF}, {0x80, 0xBF}},
    {{0xE1, 0xEC}, {0x80, 0xBF}, {0x80, 0xBF}},
    {{0xED, 0xED}, {0x80, 0x9F}, {0x80, 0xBF}},
    {{0xEE, 0xEF}, {0x80, 0xBF}, {0x80, 0xBF}},
    {{0xF0, 0xF0}, {0x90, 0xBF}, {0x80, 0xBF}, {0x80, 0xBF}},
    {{0xF1, 0xF3}, {0x80, 0xBF}, {0x80, 0xBF}, {0x80, 0xBF}},
    {{0xF4, 0xF4}, {0x80, 0x8F}, {0x80, 0xBF}, {0x80, 0xBF}},
};

}  // namespace

// Returns (length, valid) of what starts at s[i]: a whole well-formed sequence, or the maximal
// subpart (the longest prefix of any well-formed sequence, at least one byte).
std::pair<size_t, bool> reference_unit(const std::string& s, size_t i) {
  size_t longest_prefix = 0;
  for (const auto& row : kWellFormed) {
    size_t k = 0;
    while (k < row.size() && i + k < s.size() && (unsigned char)s[i + k] >= row[k].lo &&
           (unsigned char)s[i + k] <= row[k].hi)
      ++k;
    if (k == row.size()) return {k, true};
    longest_prefix = std::max(longest_prefix, k);
  }
  return {std::max<size_t>(longest_prefix, 1), false};
}

std::string reference_replace(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const auto [len, valid] = reference_unit(s, i);
    out += valid ? s.substr(i, len) : std::string("\xEF\xBF\xBD");
    i += len;
  }
  return out;
}

}  // namespace eagerlm::test
