// Malformed vocabularies and merges are rejected with kInvalidFile (kUnsupported for features
// eagerlm does not implement), and the message names the file and the line or entry. Built on a
// small valid vocabulary (256 byte tokens, a few merges, <|endoftext|> last) that each case breaks
// in one way.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/tokenizer/tokenizer.h"
#include "test/tokenizer/tokenizer_test_support.h"

namespace {

using eagerlm::ErrorCode;
using eagerlm::Tokenizer;
using eagerlm::test::TempDir;
using eagerlm::test::write_file;
using nlohmann::json;

const std::string kSpace = "\u0120";  // "Ġ", the stand-in for byte 0x20

// Byte tokens 0..255 in byte order, then "he", "Ġt", "Ġthe"... as merges make them, then EOT.
json small_vocab() {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[eagerlm::test::reference_byte_spelling()[b]] = b;
  vocab["he"] = 256;
  vocab[kSpace + "t"] = 257;
  vocab[kSpace + "the"] = 258;
  vocab["<|endoftext|>"] = 259;
  return vocab;
}
const std::string kMerges = "#version: 0.2\nh e\n" + kSpace + " t\n" + kSpace + "t he\n";

// Writes vocab.json + merges.txt and loads them; returns the error, or fails if none.
eagerlm::Error load_error(const std::string& vocab_text, const std::string& merges_text,
                          ErrorCode expected = ErrorCode::kInvalidFile) {
  TempDir dir;
  write_file(dir.path() / "vocab.json", vocab_text);
  write_file(dir.path() / "merges.txt", merges_text);
  try {
    Tokenizer::from_directory(dir.str());
  } catch (const eagerlm::Error& e) {
    CHECK(e.code() == expected);
    return e;
  }
  FAIL("loaded a malformed vocabulary: " << vocab_text.substr(0, 80) << " / " << merges_text.substr(0, 80));
  throw;
}

Tokenizer load_ok(const std::string& vocab_text, const std::string& merges_text) {
  TempDir dir;
  write_file(dir.path() / "vocab.json", vocab_text);
  write_file(dir.path() / "merges.txt", merges_text);
  return Tokenizer::from_directory(dir.str());
}

}  // namespace

TEST_CASE("validation: the small vocabulary itself is valid", "[tokenizer][validation]") {
  const Tokenizer tok = load_ok(small_vocab().dump(), kMerges);
  CHECK(tok.vocab_size() == 260);
  CHECK(tok.eos_id() == 259);
  // " the" merges fully; " hex" has "he" but no merge of "Ġ" with "he". Byte b has id b here.
  CHECK(tok.encode(" the hex") == std::vector<int32_t>{258, ' ', 256, 'x'});
  // Windows line endings and no final newline are fine.
  const Tokenizer crlf =
      load_ok(small_vocab().dump(), "#version: 0.2\r\nh e\r\n" + kSpace + " t\r\n" + kSpace + "t he");
  CHECK(crlf.encode(" the") == std::vector<int32_t>{258});
}

TEST_CASE("validation: merges lines must have exactly two parts", "[tokenizer][validation]") {
  for (const std::string& bad :
       {std::string("he"), std::string("h e x"), std::string("h  e"), std::string(" h"), std::string("h ")}) {
    INFO("line: " << bad);
    const auto e = load_error(small_vocab().dump(), "#version: 0.2\nh e\n" + bad + "\n");
    CHECK_THAT(e.what(), Catch::Contains("merges.txt") && Catch::Contains("line 3"));
  }
  const auto blank = load_error(small_vocab().dump(), "#version: 0.2\nh e\n\n" + kSpace + " t\n");
  CHECK_THAT(blank.what(), Catch::Contains("merges.txt") && Catch::Contains("line 3"));
}

TEST_CASE("validation: merge parts and their concatenation must be in the vocabulary", "[tokenizer][validation]") {
  const auto part = load_error(small_vocab().dump(), "#version: 0.2\nh e\nhe \u4f60\n");
  CHECK_THAT(part.what(), Catch::Contains("merges.txt") && Catch::Contains("line 3") && Catch::Contains("\u4f60") &&
                              Catch::Contains("vocab.json"));
  const auto joined = load_error(small_vocab().dump(), "#version: 0.2\nh e\nx y\n");
  CHECK_THAT(joined.what(), Catch::Contains("line 3") && Catch::Contains("\"xy\""));
}

TEST_CASE("validation: #version header only as the first line; without it no merge is lost",
          "[tokenizer][validation]") {
  const auto late = load_error(small_vocab().dump(), "h e\n#version: 0.2\n");
  CHECK_THAT(late.what(), Catch::Contains("line 2") && Catch::Contains("#version"));
  // Without a header the first line is a merge (Hugging Face's reading; OpenAI's code would drop it).
  const Tokenizer headless = load_ok(small_vocab().dump(), "h e\n");
  CHECK(headless.encode("he") == std::vector<int32_t>{256});
  const Tokenizer headed = load_ok(small_vocab().dump(), "#version: 0.2\nh e\n");
  CHECK(headed.encode("he") == std::vector<int32_t>{256});
  // "# #"-style merges start with '#' but are not headers.
  json vocab = small_vocab();
  vocab.erase("<|endoftext|>");
  vocab["##"] = 259;
  vocab["<|endoftext|>"] = 260;
  CHECK(load_ok(vocab.dump(), "# #\n").encode("##") == std::vector<int32_t>{259});
  CHECK(load_error(small_vocab().dump(), "").what() != std::string());
}

TEST_CASE("validation: vocabulary ids", "[tokenizer][validation]") {
  json dup = small_vocab();
  dup["he"] = 257;  // same id as "Ġt"
  const auto d = load_error(dup.dump(), kMerges);
  CHECK_THAT(d.what(), Catch::Contains("vocab.json") && Catch::Contains("both have id 257"));

  json negative = small_vocab();
  negative["he"] = -5;
  CHECK_THAT(load_error(negative.dump(), kMerges).what(),
             Catch::Contains("vocab.json") && Catch::Contains("\"he\"") && Catch::Contains("negative"));

  json gap = small_vocab();
  gap["he"] = 1000;
  CHECK_THAT(load_error(gap.dump(), kMerges).what(), Catch::Contains("\"he\"") && Catch::Contains("1000"));

  CHECK_THAT(load_error("{\"a\": 1.5}", kMerges).what(), Catch::Contains("\"a\"") && Catch::Contains("integer"));
  CHECK_THAT(load_error("{\"a\": \"1\"}", kMerges).what(), Catch::Contains("integer"));
  CHECK_THAT(load_error("[1, 2]", kMerges).what(), Catch::Contains("object"));
  CHECK_THAT(load_error("{\"a\": 0, \"a\": 1}", kMerges).what(), Catch::Contains("more than once"));
  CHECK_THAT(load_error("{\"a\": 0,", kMerges).what(), Catch::Contains("vocab.json") && Catch::Contains("JSON"));
  CHECK_THAT(load_error("{}", kMerges).what(), Catch::Contains("empty"));
}

TEST_CASE("validation: all 256 byte tokens must be present", "[tokenizer][validation]") {
  json missing = small_vocab();
  const std::string newline = eagerlm::test::reference_byte_spelling()['\n'];  // "Ċ"
  const int id = missing[newline].get<int>();
  missing.erase(newline);
  missing["\u4f60"] = id;  // keep ids contiguous so that the byte check is what fails
  const auto e = load_error(missing.dump(), kMerges);
  CHECK_THAT(e.what(), Catch::Contains("vocab.json") && Catch::Contains("0x0A") && Catch::Contains(newline));
}

TEST_CASE("validation: <|endoftext|> must be the last id", "[tokenizer][validation]") {
  json early = small_vocab();
  early["<|endoftext|>"] = 258;
  early[kSpace + "the"] = 259;
  const auto e = load_error(early.dump(), kMerges);
  CHECK_THAT(e.what(), Catch::Contains("vocab.json") && Catch::Contains("<|endoftext|>") && Catch::Contains("259"));
  // Absent altogether is fine: eos_id() is then -1.
  json none = small_vocab();
  none.erase("<|endoftext|>");
  CHECK(load_ok(none.dump(), kMerges).eos_id() == -1);
}

TEST_CASE("validation: tokenizer.json entries", "[tokenizer][validation]") {
  const auto load_json = [](const json& doc, ErrorCode expected = ErrorCode::kInvalidFile) {
    TempDir dir;
    write_file(dir.path() / "tokenizer.json", doc.dump());
    try {
      Tokenizer::from_directory(dir.str());
    } catch (const eagerlm::Error& e) {
      CHECK(e.code() == expected);
      CHECK_THAT(e.what(), Catch::Contains("tokenizer.json"));
      return std::string(e.what());
    }
    FAIL("loaded a malformed tokenizer.json: " << doc.dump().substr(0, 200));
    return std::string();
  };
  const json good = {
      {"model", {{"type", "BPE"}, {"vocab", small_vocab()}, {"merges", {"h e", json::array({kSpace, "t"})}}}}};
  {
    TempDir dir;
    write_file(dir.path() / "tokenizer.json", good.dump());
    CHECK(Tokenizer::from_directory(dir.str()).encode("he") == std::vector<int32_t>{256});
  }
  json bad = good;
  bad["model"]["merges"].push_back(7);
  CHECK_THAT(load_json(bad), Catch::Contains("entry 2"));
  bad = good;
  bad["model"]["merges"].push_back(json::array({"a", "b", "c"}));
  CHECK_THAT(load_json(bad), Catch::Contains("entry 2"));
  bad = good;
  bad["model"]["merges"].push_back("a b c");
  CHECK_THAT(load_json(bad), Catch::Contains("entry 2"));
  bad = good;
  bad["model"]["merges"].push_back(json::array({"x", "y"}));
  CHECK_THAT(load_json(bad), Catch::Contains("entry 2") && Catch::Contains("\"xy\""));
  bad = good;
  bad["model"]["type"] = "WordPiece";
  CHECK_THAT(load_json(bad, ErrorCode::kUnsupported), Catch::Contains("WordPiece"));
  bad = good;
  bad["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}};
  CHECK_THAT(load_json(bad, ErrorCode::kUnsupported), Catch::Contains("add_prefix_space"));
  bad = good;
  bad["added_tokens"] = json::array({{{"id", 300}, {"content", "<pad>"}}});
  CHECK_THAT(load_json(bad), Catch::Contains("added_tokens") && Catch::Contains("gap"));
  bad = good;
  bad["added_tokens"] = json::array({{{"id", 256}, {"content", "<pad>"}}});
  CHECK_THAT(load_json(bad), Catch::Contains("added_tokens") && Catch::Contains("differs"));
  bad = good;
  bad["model"].erase("merges");
  CHECK_THAT(load_json(bad), Catch::Contains("merges"));
}

TEST_CASE("validation: tokenizer.json added tokens extend the vocabulary", "[tokenizer][validation]") {
  json doc = {{"model", {{"type", "BPE"}, {"vocab", small_vocab()}, {"merges", {"h e"}}}},
              {"added_tokens", json::array({{{"id", 259}, {"content", "<|endoftext|>"}, {"special", true}},
                                            {{"id", 260}, {"content", "<pad>"}, {"special", true}}})}};
  TempDir dir;
  write_file(dir.path() / "tokenizer.json", doc.dump());
  const Tokenizer tok = Tokenizer::from_directory(dir.str());
  CHECK(tok.vocab_size() == 261);
  CHECK(tok.token_bytes(260) == "<pad>");
  eagerlm::EncodeOptions special;
  special.parse_special = true;
  CHECK(tok.encode("he<pad><|endoftext|>", special) == std::vector<int32_t>{256, 260, 259});
}

TEST_CASE("validation: word caches never mix tokenizers", "[tokenizer][cache]") {
  // Six tokenizers (more than a thread keeps caches for) with different merges, used in turn:
  // each must give its own ids for the same words every time.
  std::vector<Tokenizer> tokenizers;
  std::vector<std::vector<int32_t>> expected;
  const std::vector<std::string> merge_sets = {"h e\n",
                                               kSpace + " t\n",
                                               "h e\n" + kSpace + " t\n",
                                               kMerges,
                                               kSpace + " t\n" + kSpace + "t he\n",
                                               "h e\n" + kSpace + "t he\n"};
  for (const auto& merges : merge_sets) tokenizers.push_back(load_ok(small_vocab().dump(), merges));
  tokenizers.push_back(Tokenizer::gpt2());
  for (const auto& tok : tokenizers) expected.push_back(tok.encode(" the hex the"));
  CHECK(expected[0] != expected[1]);
  CHECK(expected[3] == std::vector<int32_t>{258, ' ', 256, 'x', 258});
  for (int round = 0; round < 5; ++round)
    for (size_t i = 0; i < tokenizers.size(); ++i) REQUIRE(tokenizers[i].encode(" the hex the") == expected[i]);
}
