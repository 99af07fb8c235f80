// BPE merging against a plain transcription of GPT-2's bpe() (encoder.py): symbols as strings,
// find the lowest-ranked adjacent pair, merge all its occurrences left to right, repeat.
// Checked on GPT-2's real merges and on random merge tables whose ranks are shuffled so that
// merges created in a round can outrank the pair being merged (GPT-2 still finishes the round).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/tokenizer/bpe.h"
#include "engine/tokenizer/pretokenizer.h"
#include "engine/tokenizer/tokenizer.h"
#include "test/tokenizer/tokenizer_test_support.h"

namespace {

using Ranks = std::map<std::pair<std::string, std::string>, int>;

std::vector<std::string> reference_bpe(std::vector<std::string> word, const Ranks& ranks) {
  while (word.size() > 1) {
    int best = -1;
    std::pair<std::string, std::string> best_pair;
    for (size_t i = 0; i + 1 < word.size(); ++i) {
      const auto it = ranks.find({word[i], word[i + 1]});
      if (it != ranks.end() && (best < 0 || it->second < best)) {
        best = it->second;
        best_pair = it->first;
      }
    }
    if (best < 0) break;
    std::vector<std::string> merged;
    for (size_t i = 0; i < word.size();) {
      if (i + 1 < word.size() && word[i] == best_pair.first && word[i + 1] == best_pair.second) {
        merged.push_back(word[i] + word[i + 1]);
        i += 2;
      } else {
        merged.push_back(word[i++]);
      }
    }
    word = std::move(merged);
  }
  return word;
}

struct Gpt2Reference {
  std::map<std::string, int32_t> encoder;  // spelled token -> id
  Ranks ranks;

  Gpt2Reference() {
    using eagerlm::test::gpt2_data_path;
    using eagerlm::test::read_file;
    const auto doc = nlohmann::json::parse(read_file(gpt2_data_path("encoder.json")));
    for (const auto& [k, v] : doc.items()) encoder[k] = v.get<int32_t>();
    std::istringstream lines(read_file(gpt2_data_path("vocab.bpe")));
    std::string line;
    std::getline(lines, line);  // #version
    int rank = 0;
    while (std::getline(lines, line)) {
      if (line.empty()) continue;
      const size_t space = line.find(' ');
      ranks[{line.substr(0, space), line.substr(space + 1)}] = rank++;
    }
  }

  std::vector<int32_t> encode_piece(const std::string& piece) const {
    std::vector<std::string> word;
    for (unsigned char b : piece) word.push_back(eagerlm::test::reference_byte_spelling()[b]);
    std::vector<int32_t> ids;
    for (const auto& token : reference_bpe(word, ranks)) ids.push_back(encoder.at(token));
    return ids;
  }
};

const Gpt2Reference& gpt2_reference() {
  static const Gpt2Reference ref;
  return ref;
}

}  // namespace

TEST_CASE("bpe: pieces of the GPT-2 cases and random pieces match GPT-2's bpe()", "[tokenizer][bpe]") {
  const auto& ref = gpt2_reference();
  const eagerlm::Tokenizer tok = eagerlm::Tokenizer::gpt2();
  std::vector<std::string> pieces;
  for (const auto& c : eagerlm::test::gpt2_cases()) {
    eagerlm::PreTokenizer pre(c.text);
    std::string_view piece;
    while (pre.next(piece)) pieces.emplace_back(piece);
  }
  std::mt19937 rng(Catch::rngSeed());
  const std::string letters = "etaoinshrdlucmfwypvbgkqjxz";
  for (int i = 0; i < 1500; ++i) {  // random letter strings: unusual merge orders
    std::string word = rng() % 2 ? " " : "";
    const int len = 1 + int(rng() % 30);
    for (int k = 0; k < len; ++k) word += letters[std::min<size_t>(rng() % 26, rng() % 26)];
    pieces.push_back(word);
  }
  pieces.push_back(std::string(300, ' '));
  pieces.push_back(std::string(257, 'a'));
  pieces.push_back(std::string(200, '!'));
  for (const auto& piece : pieces) {
    INFO("piece: " << piece);
    REQUIRE(tok.encode(piece) == ref.encode_piece(piece));
  }
}

TEST_CASE("bpe: random merge tables with shuffled ranks match GPT-2's bpe()", "[tokenizer][bpe]") {
  std::mt19937 rng(Catch::rngSeed());
  for (int table = 0; table < 40; ++table) {
    // Tokens 0..3 are the bytes 'a'..'d'; merges combine random existing tokens.
    std::vector<std::string> tokens = {"a", "b", "c", "d"};
    std::map<std::string, int32_t> id_of = {{"a", 0}, {"b", 1}, {"c", 2}, {"d", 3}};
    std::vector<std::pair<std::string, std::string>> merges;
    const int merge_count = 5 + int(rng() % 40);
    for (int attempt = 0; int(merges.size()) < merge_count && attempt < 1000; ++attempt) {
      const std::string& l = tokens[rng() % tokens.size()];
      const std::string& r = tokens[rng() % tokens.size()];
      if (l.size() + r.size() > 8) continue;
      bool seen = false;
      for (const auto& m : merges) seen = seen || (m.first == l && m.second == r);
      if (seen) continue;
      merges.emplace_back(l, r);
      if (!id_of.count(l + r)) {
        id_of[l + r] = int32_t(tokens.size());
        tokens.push_back(l + r);
      }
    }
    std::shuffle(merges.begin(), merges.end(), rng);  // ranks ignore creation order

    eagerlm::MergeTable table_under_test;
    Ranks ranks;
    for (size_t rank = 0; rank < merges.size(); ++rank) {
      const auto& [l, r] = merges[rank];
      table_under_test.insert(id_of.at(l), id_of.at(r), int32_t(rank), id_of.at(l + r));
      ranks[merges[rank]] = int(rank);
    }
    std::array<int32_t, 256> byte_token{};
    for (int b = 0; b < 4; ++b) byte_token['a' + b] = b;

    eagerlm::BpeScratch scratch;
    for (int w = 0; w < 200; ++w) {
      std::string word(1 + rng() % 40, 'a');
      for (char& ch : word) ch = char('a' + std::min(rng() % 4, rng() % 4));
      std::vector<std::string> symbols;
      for (char ch : word) symbols.emplace_back(1, ch);
      std::vector<int32_t> expected;
      for (const auto& s : reference_bpe(symbols, ranks)) expected.push_back(id_of.at(s));
      std::vector<int32_t> got;
      eagerlm::bpe_encode(word, byte_token, table_under_test, scratch, got);
      INFO("table " << table << " word " << word);
      REQUIRE(got == expected);
    }
  }
}

TEST_CASE("bpe: merge table lookups", "[tokenizer][bpe]") {
  eagerlm::MergeTable t;
  CHECK(t.find(1, 2) == nullptr);
  std::mt19937 rng(Catch::rngSeed());
  std::map<std::pair<int32_t, int32_t>, std::pair<int32_t, int32_t>> reference;
  for (int i = 0; i < 20000; ++i) {
    const int32_t l = int32_t(rng() % 300), r = int32_t(rng() % 300), rank = int32_t(rng() % 100000);
    t.insert(l, r, rank, i);
    reference[{l, r}] = {rank, i};  // later insert wins
  }
  CHECK(t.size() == reference.size());
  for (int32_t l = 0; l < 300; ++l)
    for (int32_t r = 0; r < 300; ++r) {
      const auto* m = t.find(l, r);
      const auto it = reference.find({l, r});
      REQUIRE((m != nullptr) == (it != reference.end()));
      if (m) REQUIRE(std::make_pair(m->rank, m->merged) == it->second);
    }
}
