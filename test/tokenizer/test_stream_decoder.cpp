// StreamDecoder: each push returns only whole characters (every chunk is valid UTF-8 on its own),
// and the chunks plus finish() equal Python's decode(errors="replace") of all the bytes
// (reference: Table 3-7 in tokenizer_test_support).
#include <catch2/catch.hpp>

#include <map>
#include <random>

#include "engine/core/error.h"
#include "engine/core/utf8.h"
#include "engine/tokenizer/tokenizer.h"
#include "test/tokenizer/tokenizer_test_support.h"

namespace {

using eagerlm::StreamDecoder;
using eagerlm::Tokenizer;

bool valid_utf8(const std::string& s) { return eagerlm::utf8::first_invalid_offset(s) == std::string::npos; }

// Id of the single-byte token for each byte.
std::map<unsigned char, int32_t> byte_ids(const Tokenizer& tok) {
  std::map<unsigned char, int32_t> ids;
  for (int32_t id = 0; id < tok.vocab_size(); ++id)
    if (tok.token_bytes(id).size() == 1) ids[static_cast<unsigned char>(tok.token_bytes(id)[0])] = id;
  REQUIRE(ids.size() == 256);
  return ids;
}

std::string stream_all(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  StreamDecoder stream(tok);
  std::string out;
  for (int32_t id : ids) {
    const std::string chunk = stream.push(id);
    REQUIRE(valid_utf8(chunk));
    out += chunk;
  }
  const std::string tail = stream.finish();
  REQUIRE(valid_utf8(tail));
  return out + tail;
}

}  // namespace

TEST_CASE("stream decoder: the GPT-2 cases stream back to their text", "[tokenizer][stream]") {
  const Tokenizer tok = Tokenizer::gpt2();
  for (const auto& c : eagerlm::test::gpt2_cases()) {
    INFO(c.text);
    REQUIRE(stream_all(tok, c.ids) == c.text);
  }
}

TEST_CASE("stream decoder: a character split over byte tokens comes out whole", "[tokenizer][stream]") {
  const Tokenizer tok = Tokenizer::gpt2();
  const auto byte = byte_ids(tok);
  StreamDecoder stream(tok);
  CHECK(stream.push(byte.at('a')) == "a");
  CHECK(stream.push(byte.at(0xF0)).empty());  // U+1F600 = F0 9F 98 80
  CHECK(stream.push(byte.at(0x9F)).empty());
  CHECK(stream.push(byte.at(0x98)).empty());
  CHECK(stream.push(byte.at(0x80)) == "\U0001F600");
  CHECK(stream.finish().empty());

  // An incomplete tail is flushed as one U+FFFD, and the decoder starts afresh.
  CHECK(stream.push(byte.at(0xE2)).empty());
  CHECK(stream.push(byte.at(0x82)).empty());
  CHECK(stream.finish() == "\xEF\xBF\xBD");
  CHECK(stream.push(byte.at('b')) == "b");

  // A sequence that cannot complete is replaced at once.
  CHECK(stream.push(byte.at(0xE2)).empty());
  CHECK(stream.push(byte.at('c')) ==
        "\xEF\xBF\xBD"
        "c");
  CHECK(stream.push(byte.at(0x80)) == "\xEF\xBF\xBD");
  CHECK(stream.finish().empty());
}

TEST_CASE("stream decoder: an unknown id throws and leaves the state alone", "[tokenizer][stream]") {
  const Tokenizer tok = Tokenizer::gpt2();
  const auto byte = byte_ids(tok);
  StreamDecoder stream(tok);
  CHECK(stream.push(byte.at(0xC3)).empty());
  CHECK_THROWS_AS(stream.push(tok.vocab_size()), eagerlm::Error);
  CHECK_THROWS_AS(stream.push(-1), eagerlm::Error);
  CHECK(stream.push(byte.at(0xA9)) == "\u00e9");
}

TEST_CASE("stream decoder: random ids stream to Python's replace-decoding of their bytes", "[tokenizer][stream]") {
  const Tokenizer tok = Tokenizer::gpt2();
  // Tokens whose bytes are not whole characters, to make splits likely.
  std::vector<int32_t> partial;
  for (int32_t id = 0; id < tok.vocab_size(); ++id)
    if (!valid_utf8(tok.token_bytes(id))) partial.push_back(id);
  REQUIRE(partial.size() > 256);
  std::mt19937 rng(Catch::rngSeed());
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<int32_t> ids(rng() % 12);
    for (int32_t& id : ids) id = rng() % 2 ? partial[rng() % partial.size()] : int32_t(rng() % tok.vocab_size());
    INFO("trial " << trial);
    REQUIRE(stream_all(tok, ids) == eagerlm::test::reference_replace(tok.decode(ids)));
  }
}
