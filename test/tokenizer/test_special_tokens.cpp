// <|endoftext|> is plain text unless parse_special is set (GPT-2's encoder treats it as text).
#include <catch2/catch.hpp>

#include "engine/tokenizer/tokenizer.h"

using eagerlm::EncodeOptions;
using eagerlm::Tokenizer;

namespace {
EncodeOptions parse_special() {
  EncodeOptions o;
  o.parse_special = true;
  return o;
}
}  // namespace

TEST_CASE("special tokens: plain text by default", "[tokenizer][special]") {
  const Tokenizer tok = Tokenizer::gpt2();
  // GPT-2's encoder on "<|endoftext|>": "<|", "endoftext", "|>" pieces.
  const std::vector<int32_t> plain = tok.encode("<|endoftext|>");
  CHECK(plain == std::vector<int32_t>{27, 91, 437, 1659, 5239, 91, 29});
  CHECK(tok.decode(plain) == "<|endoftext|>");
}

TEST_CASE("special tokens: parsed when asked", "[tokenizer][special]") {
  const Tokenizer tok = Tokenizer::gpt2();
  CHECK(tok.encode("<|endoftext|>", parse_special()) == std::vector<int32_t>{50256});
  const auto hello = tok.encode("Hello");
  const auto world = tok.encode(" world");
  std::vector<int32_t> expected = hello;
  expected.push_back(50256);
  expected.insert(expected.end(), world.begin(), world.end());
  expected.push_back(50256);
  expected.push_back(50256);
  CHECK(tok.encode("Hello<|endoftext|> world<|endoftext|><|endoftext|>", parse_special()) == expected);
  // Text around a special token is pre-tokenized separately, as in tiktoken / HF tokenizers.
  CHECK(tok.encode("a <|endoftext|>", parse_special()) == std::vector<int32_t>{64, 220, 50256});
  // Near misses stay text.
  CHECK(tok.encode("<|endoftext|", parse_special()) == tok.encode("<|endoftext|"));
  CHECK(tok.encode("<|endoftext|>", parse_special()) != tok.encode("<|endoftext|>"));
  // Decoding gives back the same bytes either way.
  const std::string text = "x<|endoftext|>y<|endoftext";
  CHECK(tok.decode(tok.encode(text, parse_special())) == text);
}
