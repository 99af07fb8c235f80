// Text from files, requests and the command line, made fit for a one-line error message: names
// from a malformed file may hold newlines, terminal escapes, invalid UTF-8 or megabytes of junk.
// Every message that quotes such text quotes escape_for_message(text).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace eagerlm {

// `text` with control characters, backslashes and bytes that are not valid UTF-8 written as C
// escapes (\n, \t, \\, \x1b), valid multi-byte characters kept, and cut after about max_bytes
// bytes of input with "..." appended.
std::string escape_for_message(std::string_view text, size_t max_bytes = 80);

// escape_for_message(text) in single quotes: how messages quote a name from a file.
inline std::string quoted_text(std::string_view text, size_t max_bytes = 80) {
  return "'" + escape_for_message(text, max_bytes) + "'";
}

}  // namespace eagerlm
