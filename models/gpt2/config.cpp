#include "models/gpt2/config.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/core/error.h"
#include "engine/core/text.h"
#include "engine/io/mapped_file.h"
#include "engine/io/strict_json.h"

namespace eagerlm::gpt2 {

using nlohmann::json;

namespace {

// Upper bounds that keep every derived size far from overflow; real models are far below.
constexpr int64_t kMaxLayers = 4096;
constexpr int64_t kMaxWidth = 1 << 18;  // n_embd, n_inner
constexpr int64_t kMaxPositions = 1 << 20;
constexpr int64_t kMaxVocab = 1 << 24;  // ids are int32
constexpr double kMaxParameters = 1e12;
constexpr int kMaxConfigDepth = 32;           // Hugging Face configs nest a few levels at most
constexpr size_t kMaxConfigBytes = 16 << 20;  // GPT-2's is 0.7 KB; label maps make some larger

[[noreturn]] void bad(const std::string& source, const std::string& field, const std::string& what) {
  throw_error(ErrorCode::kInvalidFile, source + ": field '" + field + "' " + what);
}

void check_range(const std::string& source, const char* field, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi)
    bad(source, field,
        "is " + std::to_string(v) + ", expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
            "]");
}

// Reads an integer field (first of `names` present); the value must be a JSON integer.
bool read_int(const json& j, const std::string& source, std::initializer_list<const char*> names, int64_t& out) {
  for (const char* name : names) {
    auto it = j.find(name);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_number_integer()) bad(source, name, "must be an integer, got " + io::describe_json(*it));
    if (it->is_number_unsigned() && it->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      bad(source, name, "is out of range: " + io::describe_json(*it));
    out = it->get<int64_t>();
    return true;
  }
  return false;
}

bool read_number(const json& j, const std::string& source, const char* name, double& out) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return false;
  if (!it->is_number()) bad(source, name, "must be a number, got " + io::describe_json(*it));
  out = it->get<double>();
  return true;
}

}  // namespace

void Config::validate(const std::string& source) const {
  check_range(source, "n_layer", n_layer, 1, kMaxLayers);
  check_range(source, "n_embd", n_embd, 1, kMaxWidth);
  check_range(source, "n_head", n_head, 1, n_embd);
  if (n_embd % n_head != 0)
    bad(source, "n_head", "(" + std::to_string(n_head) + ") must divide n_embd (" + std::to_string(n_embd) + ")");
  check_range(source, "n_positions", n_positions, 1, kMaxPositions);
  check_range(source, "vocab_size", vocab_size, 1, kMaxVocab);
  if (n_inner != 0) check_range(source, "n_inner", n_inner, 1, kMaxWidth);
  if (!(layer_norm_epsilon > 0) || !std::isfinite(layer_norm_epsilon))
    bad(source, "layer_norm_epsilon", "must be a positive finite number");
  if (!(initializer_range > 0) || !std::isfinite(initializer_range))
    bad(source, "initializer_range", "must be a positive finite number");
  if (activation_function != "gelu_new" && activation_function != "gelu_pytorch_tanh")
    bad(source, "activation_function",
        "is \"" + escape_for_message(activation_function, 40) +
            "\"; eagerlm supports GPT-2's tanh GELU (\"gelu_new\")");
  // Hugging Face's own configs of small-vocabulary GPT-2s keep GPT-2's 50256: such a model has no
  // end-of-text id, so generation never ends on one (as in Hugging Face, which never samples it).
  check_range(source, "eos_token_id", eos_token_id, 0, INT32_MAX);
  const double d = double(n_embd), L = double(n_layer);
  const double params = double(vocab_size) * d + double(n_positions) * d +
                        L * (d * 3 * d + d * d + 2 * d * double(mlp_width()) + 13 * d) + 2 * d;
  if (params > kMaxParameters)
    bad(source, "n_layer",
        "and the other sizes describe " + std::to_string(params) + " parameters, more than eagerlm accepts (1e12)");
}

std::string Config::to_json(DType weights_dtype) const {
  const char* torch_dtype = weights_dtype == DType::kF16    ? "float16"
                            : weights_dtype == DType::kBF16 ? "bfloat16"
                                                            : "float32";
  json j = {
      {"architectures", {"GPT2LMHeadModel"}},
      {"model_type", "gpt2"},
      {"n_layer", n_layer},
      {"n_embd", n_embd},
      {"n_head", n_head},
      {"n_positions", n_positions},
      {"n_ctx", n_positions},
      {"vocab_size", vocab_size},
      {"n_inner", n_inner > 0 ? json(n_inner) : json(nullptr)},
      {"layer_norm_epsilon", layer_norm_epsilon},
      {"initializer_range", initializer_range},
      {"activation_function", activation_function},
      {"bos_token_id", eos_token_id},
      {"eos_token_id", eos_token_id},
      {"resid_pdrop", 0.1},
      {"embd_pdrop", 0.1},
      {"attn_pdrop", 0.1},
      {"tie_word_embeddings", true},
      {"torch_dtype", torch_dtype},
  };
  return j.dump(2) + "\n";
}

Config config_from_json(const std::string& text, const std::string& source) {
  const json j = io::parse_strict_json(text, source, kMaxConfigDepth);
  if (!j.is_object())
    throw_error(ErrorCode::kInvalidFile, source + ": expected a JSON object, got " + io::describe_json(j));
  if (auto it = j.find("model_type"); it != j.end() && it->is_string() && *it != "gpt2")
    bad(source, "model_type", "is " + io::describe_json(*it) + ", expected \"gpt2\"");

  Config c;
  const struct {
    std::initializer_list<const char*> names;
    int64_t* field;
  } required[] = {
      {{"n_layer", "num_hidden_layers"}, &c.n_layer},
      {{"n_embd", "hidden_size"}, &c.n_embd},
      {{"n_head", "num_attention_heads"}, &c.n_head},
      {{"n_positions", "max_position_embeddings", "n_ctx"}, &c.n_positions},
      {{"vocab_size"}, &c.vocab_size},
  };
  for (const auto& r : required)
    if (!read_int(j, source, r.names, *r.field))
      throw_error(ErrorCode::kInvalidFile, source + ": missing required field '" + *r.names.begin() + "'");
  read_int(j, source, {"n_inner"}, c.n_inner);
  // Without an eos_token_id, GPT-2's 50256, or the last id of a smaller vocabulary (one given
  // outside the vocabulary is kept: see validate()).
  if (!read_int(j, source, {"eos_token_id"}, c.eos_token_id))
    c.eos_token_id = std::min<int64_t>(50256, c.vocab_size - 1);
  read_number(j, source, "layer_norm_epsilon", c.layer_norm_epsilon);
  read_number(j, source, "initializer_range", c.initializer_range);
  if (auto it = j.find("activation_function"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) bad(source, "activation_function", "must be a string");
    c.activation_function = it->get<std::string>();
  }
  c.validate(source);
  return c;
}

Config config_from_file(const std::string& path) {
  return config_from_json(io::read_file_limited(path, kMaxConfigBytes), path);
}

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = {"gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"};
  return names;
}

Config preset(std::string_view name) {
  Config c;  // defaults are GPT-2 124M
  if (name == "gpt2") return c;
  if (name == "gpt2-medium") {
    c.n_layer = 24, c.n_embd = 1024, c.n_head = 16;
  } else if (name == "gpt2-large") {
    c.n_layer = 36, c.n_embd = 1280, c.n_head = 20;
  } else if (name == "gpt2-xl") {
    c.n_layer = 48, c.n_embd = 1600, c.n_head = 25;
  } else {
    throw_error(ErrorCode::kInvalidArgument,
                "unknown preset " + quoted_text(name) + " (expected gpt2, gpt2-medium, gpt2-large or gpt2-xl)");
  }
  return c;
}

}  // namespace eagerlm::gpt2
