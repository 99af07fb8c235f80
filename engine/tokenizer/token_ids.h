// Token ids written as text, read the same way by every command and tool that takes them
// (detokenize's input, generate --prompt-ids, the conformance dump): decimal integers separated
// by commas, spaces, tabs or newlines, optionally inside one pair of brackets ("[1, 2, 3]", a JSON
// array of integers).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace eagerlm {

// Throws Error(kInvalidArgument) "<source>: token N '<text>' is not a token id (expected an
// integer from 0 to vocab_size - 1)", N counted from 1; vocab_size <= 0 only bounds ids by
// INT32_MAX. The offending text is escaped and cut to a few dozen bytes.
std::vector<int32_t> parse_token_ids(std::string_view text, int64_t vocab_size, const std::string& source);

}  // namespace eagerlm
