// The three vocabulary file formats (vocab.json + merges.txt, encoder.json + vocab.bpe,
// tokenizer.json with "a b" or ["a", "b"] merges), written from the shared GPT-2 files, give the
// same tokenizer as the embedded vocabulary; and model directories are searched as documented.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <random>

#include "engine/core/error.h"
#include "engine/tokenizer/tokenizer.h"
#include "test/tokenizer/tokenizer_test_support.h"

namespace {

using eagerlm::Tokenizer;
using eagerlm::test::gpt2_data_path;
using eagerlm::test::read_file;
using eagerlm::test::TempDir;
using eagerlm::test::write_file;
using nlohmann::json;

std::string tokenizer_json(bool merges_as_pairs) {
  const std::string bpe = read_file(gpt2_data_path("vocab.bpe"));
  json merges = json::array();
  size_t start = bpe.find('\n') + 1;  // past "#version: 0.2"
  while (start < bpe.size()) {
    size_t end = bpe.find('\n', start);
    if (end == std::string::npos) end = bpe.size();
    const std::string line = bpe.substr(start, end - start);
    if (!line.empty()) {
      const size_t space = line.find(' ');
      if (merges_as_pairs)
        merges.push_back(json::array({line.substr(0, space), line.substr(space + 1)}));
      else
        merges.push_back(line);
    }
    start = end + 1;
  }
  json doc = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", json::array({{{"id", 50256},
                                     {"content", "<|endoftext|>"},
                                     {"single_word", false},
                                     {"lstrip", false},
                                     {"rstrip", false},
                                     {"normalized", true},
                                     {"special", true}}})},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
      {"post_processor",
       {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", false}, {"use_regex", true}}},
      {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"continuing_subword_prefix", ""},
        {"end_of_word_suffix", ""},
        {"fuse_unk", false},
        {"byte_fallback", false},
        {"vocab", json::parse(read_file(gpt2_data_path("encoder.json")))},
        {"merges", merges}}}};
  return doc.dump();
}

std::vector<std::string> sample_texts() {
  std::vector<std::string> texts;
  for (const auto& c : eagerlm::test::gpt2_cases()) texts.push_back(c.text);
  texts.push_back("Hello <|endoftext|> world<|endoftext|>");
  std::mt19937 rng(Catch::rngSeed());
  const std::vector<std::string> alphabet = {" ", "a",      "e",      "th", "'s",           "\n",
                                             "1", "\u00e9", "\u4f60", "!",  "<|endoftext|>"};
  for (int i = 0; i < 200; ++i) {
    std::string t;
    for (int k = 0; k < 30; ++k) t += alphabet[rng() % alphabet.size()];
    texts.push_back(t);
  }
  return texts;
}

void require_same(const Tokenizer& a, const Tokenizer& b) {
  REQUIRE(a.vocab_size() == b.vocab_size());
  REQUIRE(a.eos_id() == b.eos_id());
  for (int32_t id = 0; id < a.vocab_size(); ++id) REQUIRE(a.token_bytes(id) == b.token_bytes(id));
  REQUIRE(a.special_tokens() == b.special_tokens());
  for (const auto& text : sample_texts()) {
    INFO("text: " << text);
    REQUIRE(a.encode(text) == b.encode(text));
    eagerlm::EncodeOptions special;
    special.parse_special = true;
    REQUIRE(a.encode(text, special) == b.encode(text, special));
  }
}

}  // namespace

TEST_CASE("vocab formats: all four spellings give the embedded tokenizer", "[tokenizer][vocab]") {
  const Tokenizer embedded = Tokenizer::gpt2();
  TempDir hf, openai, tj_strings, tj_pairs;
  write_file(hf.path() / "vocab.json", read_file(gpt2_data_path("encoder.json")));
  write_file(hf.path() / "merges.txt", read_file(gpt2_data_path("vocab.bpe")));
  write_file(openai.path() / "encoder.json", read_file(gpt2_data_path("encoder.json")));
  write_file(openai.path() / "vocab.bpe", read_file(gpt2_data_path("vocab.bpe")));
  write_file(tj_strings.path() / "tokenizer.json", tokenizer_json(false));
  write_file(tj_pairs.path() / "tokenizer.json", tokenizer_json(true));

  for (const TempDir* dir : {&hf, &openai, &tj_strings, &tj_pairs}) {
    INFO("directory " << dir->str());
    const Tokenizer loaded = Tokenizer::from_directory(dir->str());
    CHECK(loaded.source().find(dir->str()) != std::string::npos);
    require_same(embedded, loaded);
    for (const auto& c : eagerlm::test::gpt2_cases()) REQUIRE(loaded.encode(c.text) == c.ids);
  }
}

TEST_CASE("vocab formats: model directory search", "[tokenizer][vocab]") {
  TempDir empty;
  CHECK(Tokenizer::for_model_directory(empty.str()).source() == Tokenizer::gpt2().source());
  try {
    Tokenizer::from_directory(empty.str());
    FAIL("from_directory accepted a directory without tokenizer files");
  } catch (const eagerlm::Error& e) {
    CHECK(e.code() == eagerlm::ErrorCode::kInvalidFile);
    CHECK_THAT(e.what(), Catch::Contains(empty.str()) && Catch::Contains("tokenizer.json"));
  }
  try {
    Tokenizer::for_model_directory(empty.str() + "/missing");
    FAIL("accepted a missing directory");
  } catch (const eagerlm::Error& e) {
    CHECK(e.code() == eagerlm::ErrorCode::kIo);
  }

  TempDir half;  // vocab.json without merges.txt: an error, not a silent fallback
  write_file(half.path() / "vocab.json", read_file(gpt2_data_path("encoder.json")));
  try {
    Tokenizer::for_model_directory(half.str());
    FAIL("accepted vocab.json without merges.txt");
  } catch (const eagerlm::Error& e) {
    CHECK(e.code() == eagerlm::ErrorCode::kInvalidFile);
    CHECK_THAT(e.what(), Catch::Contains("merges.txt"));
  }

  TempDir both;  // tokenizer.json is preferred; a broken merges.txt next to it is not read
  write_file(both.path() / "tokenizer.json", tokenizer_json(false));
  write_file(both.path() / "vocab.json", "{}");
  write_file(both.path() / "merges.txt", "garbage");
  const Tokenizer preferred = Tokenizer::for_model_directory(both.str());
  CHECK_THAT(preferred.source(), Catch::Contains("tokenizer.json"));
  CHECK(preferred.encode("Hello world") == std::vector<int32_t>{15496, 995});
}

TEST_CASE("vocab formats: copies share tables, and are cheap", "[tokenizer][vocab]") {
  const Tokenizer a = Tokenizer::gpt2();
  Tokenizer b = a;
  Tokenizer c = std::move(b);
  CHECK(&a.token_bytes(42) == &c.token_bytes(42));
  CHECK(c.encode("copy") == a.encode("copy"));
}

TEST_CASE("vocab formats: a tokenizer file that exists but cannot be read is an error, not a fallback",
          "[tokenizer][vocab][errors]") {
  // Only a name that does not exist falls back to the built-in vocabulary; a partly downloaded
  // Hugging Face cache (a dangling link) or a directory under the name must say so.
  TempDir dangling;
  std::filesystem::create_symlink(dangling.path() / "blobs" / "missing", dangling.path() / "tokenizer.json");
  TempDir directory;
  std::filesystem::create_directory(directory.path() / "tokenizer.json");
  TempDir half_dangling;
  std::filesystem::create_symlink(half_dangling.path() / "nowhere", half_dangling.path() / "merges.txt");
  write_file(half_dangling.path() / "vocab.json", read_file(gpt2_data_path("encoder.json")));
  for (const TempDir* dir : {&dangling, &directory, &half_dangling}) {
    INFO(dir->str());
    try {
      Tokenizer::for_model_directory(dir->str());
      FAIL("fell back to the built-in vocabulary");
    } catch (const eagerlm::Error& e) {
      CHECK(e.code() == eagerlm::ErrorCode::kIo);
      CHECK_THAT(e.what(), Catch::Contains(dir->str()));
    }
  }
}

TEST_CASE("vocab formats: tokenizer.json that trips the JSON library is an error naming the file",
          "[tokenizer][vocab][errors]") {
  json doc = json::parse(tokenizer_json(false));
  const struct {
    std::string text, expected;
  } cases[] = {
      {[&] {
         json d = doc;
         d["pre_tokenizer"] = 7;  // a value of the wrong type
         return d.dump();
       }(),
       "pre_tokenizer"},
      {[&] {
         json d = doc;
         d["pre_tokenizer"] = {{"type", {1, 2}}};
         return d.dump();
       }(),
       "pre_tokenizer"},
      {[&] {
         json d = doc;
         d["model"]["type"] = 12;
         return d.dump();
       }(),
       "model.type"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 1e999}, "merges": []}})", "tokenizer.json"},
      {"{\"model\": " + std::string(100000, '[') + "}", "nests deeper"},
  };
  for (const auto& c : cases) {
    TempDir dir;
    write_file(dir.path() / "tokenizer.json", c.text);
    try {
      Tokenizer::for_model_directory(dir.str());
      FAIL("accepted");
    } catch (const eagerlm::Error& e) {
      const std::string message = e.what();
      CHECK((e.code() == eagerlm::ErrorCode::kInvalidFile || e.code() == eagerlm::ErrorCode::kUnsupported));
      CHECK_THAT(message, Catch::Contains("tokenizer.json") && Catch::Contains(c.expected));
      CHECK(message.find("[json.exception") == std::string::npos);
      CHECK(message.find('\n') == std::string::npos);
      CHECK(message.size() < 400);
    }
  }
}
