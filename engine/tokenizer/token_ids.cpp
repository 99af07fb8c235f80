#include "engine/tokenizer/token_ids.h"

#include <charconv>
#include <limits>

#include "engine/core/error.h"
#include "engine/core/text.h"

namespace eagerlm {

namespace {

bool is_separator(char c) { return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

std::vector<int32_t> parse_token_ids(std::string_view text, int64_t vocab_size, const std::string& source) {
  const int64_t limit = vocab_size > 0 ? vocab_size : int64_t(std::numeric_limits<int32_t>::max()) + 1;
  const std::string range = "(expected an integer from 0 to " + std::to_string(limit - 1) + ")";
  // One pair of brackets around the whole list is allowed (a JSON array).
  size_t begin = 0, end = text.size();
  while (begin < end && is_separator(text[begin]) && text[begin] != ',') ++begin;
  while (end > begin && is_separator(text[end - 1]) && text[end - 1] != ',') --end;
  if (begin < end && text[begin] == '[') {
    if (text[end - 1] != ']') throw_error(ErrorCode::kInvalidArgument, source + ": '[' without a closing ']'");
    ++begin, --end;
  }
  std::vector<int32_t> ids;
  size_t pos = begin;
  while (pos < end) {
    if (is_separator(text[pos])) {
      ++pos;
      continue;
    }
    size_t stop = pos;
    while (stop < end && !is_separator(text[stop])) ++stop;
    const std::string_view token = text.substr(pos, stop - pos);
    int64_t value = -1;
    const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec != std::errc() || ptr != token.data() + token.size() || value < 0 || value >= limit)
      throw_error(ErrorCode::kInvalidArgument, source + ": token " + std::to_string(ids.size() + 1) + " '" +
                                                   escape_for_message(token) + "' is not a token id " + range);
    ids.push_back(int32_t(value));
    pos = stop;
  }
  return ids;
}

}  // namespace eagerlm
