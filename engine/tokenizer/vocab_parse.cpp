// Syntax-level parsing of vocab.json / encoder.json, merges.txt / vocab.bpe and tokenizer.json.
#include "engine/tokenizer/vocab_parse.h"

#include <nlohmann/json.hpp>

#include <unordered_set>

#include "engine/core/error.h"
#include "engine/core/text.h"
#include "engine/io/strict_json.h"

namespace eagerlm {
namespace {

using nlohmann::json;

// tokenizer.json nests its pre-tokenizer and post-processor sequences a few levels deep.
constexpr int kMaxTokenizerJsonDepth = 32;

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw_error(ErrorCode::kInvalidFile, source + ": " + what);
}

// Streams a flat {"token": id, ...} object straight into RawTokens, without building a JSON tree
// (the embedded GPT-2 vocabulary loads on every start, so this is on the start-up path).
class VocabObjectReader : public nlohmann::json_sax<json> {
 public:
  explicit VocabObjectReader(const std::string& source) : source_(source) {}
  std::vector<RawToken> tokens;

  bool start_object(std::size_t) override {
    if (depth_++ != 0) not_an_id("an object");
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool key(string_t& k) override {
    key_ = std::move(k);
    return true;
  }
  bool number_integer(number_integer_t v) override { return add(v); }
  bool number_unsigned(number_unsigned_t v) override {
    if (v > number_unsigned_t(INT32_MAX))
      fail(source_, "token " + quote_token(key_) + " has id " + std::to_string(v) + ", which is too large");
    return add(number_integer_t(v));
  }
  bool number_float(number_float_t, const string_t& text) override { not_an_id("the number " + text); }
  bool null() override { not_an_id("null"); }
  bool boolean(bool) override { not_an_id("a boolean"); }
  bool string(string_t&) override { not_an_id("a string"); }
  bool binary(binary_t&) override { not_an_id("binary data"); }
  bool start_array(std::size_t) override { not_an_id("an array"); }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    fail(source_, "not valid JSON: " + io::json_error_text(e));
  }

 private:
  bool add(number_integer_t id) {
    if (depth_ != 1) not_an_id("a number");
    if (id < 0) fail(source_, "token " + quote_token(key_) + " has negative id " + std::to_string(id));
    if (id > INT32_MAX)
      fail(source_, "token " + quote_token(key_) + " has id " + std::to_string(id) + ", which is too large");
    tokens.push_back({std::move(key_), id});
    return true;
  }
  [[noreturn]] void not_an_id(const std::string& what) {
    if (depth_ == 0) fail(source_, "expected a JSON object mapping tokens to ids, found " + what);
    fail(source_, "token " + quote_token(key_) + " maps to " + what + "; expected an integer id");
  }

  const std::string& source_;
  std::string key_;
  int depth_ = 0;
};

// "left right": exactly two non-empty parts separated by one space.
bool split_merge(std::string_view line, std::string_view& left, std::string_view& right) {
  const size_t space = line.find(' ');
  if (space == std::string_view::npos || space == 0 || space + 1 == line.size()) return false;
  if (line.find(' ', space + 1) != std::string_view::npos) return false;
  left = line.substr(0, space);
  right = line.substr(space + 1);
  return true;
}

std::string_view strip_bom(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  return text;
}

void reject_if_set(const json& object, const char* field, const std::string& source, const std::string& where) {
  if (!object.contains(field)) return;
  const json& v = object[field];
  const bool unset = v.is_null() || (v.is_string() && v.get<std::string>().empty()) ||
                     (v.is_boolean() && !v.get<bool>()) || (v.is_number() && v.get<double>() == 0.0);
  if (!unset)
    throw_error(ErrorCode::kUnsupported, source + ": " + where + "." + field + " is " + io::describe_json(v) +
                                             "; eagerlm implements plain GPT-2 byte-level BPE only");
}

}  // namespace

std::string quote_token(std::string_view token) {
  return "\"" + escape_for_message(token, 40) + "\"";
}

std::vector<RawToken> parse_vocab_json(std::string_view json_text, const std::string& source) {
  VocabObjectReader reader(source);
  json::sax_parse(json_text.begin(), json_text.end(), &reader);
  if (reader.tokens.empty()) fail(source, "the vocabulary is empty");

  std::unordered_set<std::string_view> seen;
  seen.reserve(reader.tokens.size());
  for (const RawToken& t : reader.tokens)
    if (!seen.insert(t.text).second) fail(source, "token " + quote_token(t.text) + " appears more than once");
  return std::move(reader.tokens);
}

std::vector<RawMerge> parse_merges_text(std::string_view text, const std::string& source) {
  text = strip_bom(text);
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();

  std::vector<RawMerge> merges;
  merges.reserve(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const size_t line_number = i + 1;
    const std::string where = "line " + std::to_string(line_number);
    if (line.substr(0, 8) == "#version") {
      if (i == 0) continue;
      fail(source, where + ": a \"#version\" header is only allowed on the first line");
    }
    std::string_view left, right;
    if (!split_merge(line, left, right))
      fail(source, where + ": expected two tokens separated by one space, found " + quote_token(line));
    merges.push_back({std::string(left), std::string(right), line_number});
  }
  if (merges.empty()) fail(source, "there are no merges");
  return merges;
}

RawVocabulary parse_tokenizer_json(std::string_view json_text, const std::string& source) {
  const json doc = io::parse_strict_json(json_text, source, kMaxTokenizerJsonDepth);
  if (!doc.is_object()) fail(source, "expected a JSON object at the top level, got " + io::describe_json(doc));
  if (!doc.contains("model") || !doc["model"].is_object()) fail(source, "has no \"model\" object");
  const json& model = doc["model"];

  if (model.contains("type") && (!model["type"].is_string() || model["type"] != "BPE"))
    throw_error(ErrorCode::kUnsupported, source + ": model.type is " + io::describe_json(model["type"]) +
                                             "; eagerlm reads byte-level BPE tokenizers only");
  reject_if_set(model, "continuing_subword_prefix", source, "model");
  reject_if_set(model, "end_of_word_suffix", source, "model");
  reject_if_set(model, "dropout", source, "model");
  reject_if_set(doc, "normalizer", source, "tokenizer");
  if (doc.contains("pre_tokenizer") && !doc["pre_tokenizer"].is_null()) {
    const json& pre = doc["pre_tokenizer"];
    const bool byte_level = pre.is_object() && pre.contains("type") && pre["type"].is_string() &&
                            pre["type"] == "ByteLevel";
    if (!byte_level)
      throw_error(ErrorCode::kUnsupported,
                  source + ": pre_tokenizer is " +
                      (pre.is_object() && pre.contains("type") ? "of type " + io::describe_json(pre["type"])
                                                               : io::describe_json(pre)) +
                      "; eagerlm implements GPT-2's ByteLevel pre-tokenizer only");
    reject_if_set(pre, "add_prefix_space", source, "pre_tokenizer");
  }

  RawVocabulary raw;
  raw.vocab_source = source + " (model.vocab)";
  raw.merges_source = source + " (model.merges)";
  raw.merges_by_line = false;
  raw.added_source = source + " (added_tokens)";

  if (!model.contains("vocab") || !model["vocab"].is_object()) fail(source, "model.vocab is missing or not an object");
  for (const auto& [token, id] : model["vocab"].items()) {
    if (!id.is_number_integer())
      fail(raw.vocab_source,
           "token " + quote_token(token) + " maps to " + io::describe_json(id) + "; expected an integer id");
    const int64_t value = id.get<int64_t>();
    if (value < 0) fail(raw.vocab_source, "token " + quote_token(token) + " has negative id " + std::to_string(value));
    if (value > INT32_MAX)
      fail(raw.vocab_source,
           "token " + quote_token(token) + " has id " + std::to_string(value) + ", which is too large");
    raw.vocab.push_back({token, value});
  }
  if (raw.vocab.empty()) fail(raw.vocab_source, "the vocabulary is empty");

  if (!model.contains("merges") || !model["merges"].is_array()) fail(source, "model.merges is missing or not an array");
  const json& merges = model["merges"];
  raw.merges.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const json& m = merges[i];
    const std::string where = "entry " + std::to_string(i);
    std::string_view left, right;
    std::string text;
    if (m.is_string()) {
      text = m.get<std::string>();
      if (!split_merge(text, left, right))
        fail(raw.merges_source, where + ": expected two tokens separated by one space, found " + quote_token(text));
      raw.merges.push_back({std::string(left), std::string(right), i});
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string() &&
               !m[0].get<std::string>().empty() && !m[1].get<std::string>().empty()) {
      raw.merges.push_back({m[0].get<std::string>(), m[1].get<std::string>(), i});
    } else {
      fail(raw.merges_source,
           where + ": expected \"left right\" or [\"left\", \"right\"], found " + io::describe_json(m));
    }
  }

  if (doc.contains("added_tokens") && !doc["added_tokens"].is_null()) {
    const json& added = doc["added_tokens"];
    if (!added.is_array()) fail(raw.added_source, "expected an array");
    for (size_t i = 0; i < added.size(); ++i) {
      const json& a = added[i];
      if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || !a.contains("content") ||
          !a["content"].is_string() || a["content"].get<std::string>().empty())
        fail(raw.added_source,
             "entry " + std::to_string(i) + ": expected {\"id\": integer, \"content\": non-empty string, ...}");
      const int64_t id = a["id"].get<int64_t>();
      if (id < 0 || id > INT32_MAX)
        fail(raw.added_source, "entry " + std::to_string(i) + " has id " + std::to_string(id) + ", out of range");
      raw.added.push_back({a["content"].get<std::string>(), id});
    }
  }
  return raw;
}

}  // namespace eagerlm
