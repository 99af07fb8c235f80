// GPT-2 configs: presets have the published sizes; config.json parsing accepts GPT-2 names and
// Hugging Face aliases; every bad value is rejected naming its field.
#include <catch2/catch.hpp>

#include "engine/core/error.h"
#include "models/gpt2/config.h"
#include "models/gpt2/parameters.h"

using namespace eagerlm;
using namespace eagerlm::gpt2;

TEST_CASE("presets have the published parameter counts", "[config]") {
  // Hugging Face's GPT2LMHeadModel.num_parameters() (the tied head counted once).
  CHECK(parameter_count(preset("gpt2")) == 124439808);
  CHECK(parameter_count(preset("gpt2-medium")) == 354823168);
  CHECK(parameter_count(preset("gpt2-large")) == 774030080);
  CHECK(parameter_count(preset("gpt2-xl")) == 1557611200);
  CHECK_THROWS_AS(preset("gpt3"), Error);
}

TEST_CASE("parameter specs follow Hugging Face names, layouts and init", "[config]") {
  const auto specs = parameter_specs(preset("gpt2"));
  REQUIRE(specs.size() == 2 + 12 * 12 + 2);
  CHECK(specs[0].name == "wte.weight");
  CHECK(specs[0].shape == Shape{50257, 768});
  CHECK(specs[1].shape == Shape{1024, 768});
  CHECK(specs[4].name == "h.0.attn.c_attn.weight");
  CHECK(specs[4].shape == Shape{768, 2304});  // Conv1D [in, out]
  CHECK(specs[6].name == "h.0.attn.c_proj.weight");
  CHECK(specs[6].init == InitKind::kNormalResidual);
  CHECK(specs[6].stddev == Approx(0.02 / std::sqrt(24.0)));
  CHECK(specs[12].shape == Shape{3072, 768});
  CHECK(specs.back().name == "ln_f.bias");
}

TEST_CASE("config.json: GPT-2 names, aliases and n_inner", "[config]") {
  const Config a =
      config_from_json(R"({"n_layer": 3, "n_embd": 40, "n_head": 5, "n_positions": 70, "vocab_size": 101})", "a.json");
  CHECK(a.d_head() == 8);
  CHECK(a.mlp_width() == 160);
  const Config b = config_from_json(
      R"({"num_hidden_layers": 2, "hidden_size": 48, "num_attention_heads": 3,
          "max_position_embeddings": 64, "vocab_size": 50, "n_inner": 100,
          "layer_norm_epsilon": 1e-6})",
      "b.json");
  CHECK(b.n_layer == 2);
  CHECK(b.n_embd == 48);
  CHECK(b.n_positions == 64);
  CHECK(b.mlp_width() == 100);
  CHECK(b.layer_norm_epsilon == 1e-6);
  const Config c = config_from_json(R"({"n_layer":1,"n_embd":8,"n_head":2,"n_ctx":16,"vocab_size":9})", "c");
  CHECK(c.n_positions == 16);
}

TEST_CASE("bad configs are rejected naming the field", "[config][errors]") {
  const std::string base_fields = R"("n_layer": 2, "n_embd": 48, "n_head": 3, "n_positions": 64, "vocab_size": 50)";
  struct Case {
    std::string json, field;
  };
  const Case cases[] = {
      {"not json", "not valid JSON"},
      {"[1, 2]", "expected a JSON object"},
      {R"({"n_embd": 48, "n_head": 3, "n_positions": 64, "vocab_size": 50})", "n_layer"},
      {R"({"n_layer": 0, "n_embd": 48, "n_head": 3, "n_positions": 64, "vocab_size": 50})", "n_layer"},
      {R"({"n_layer": -2, "n_embd": 48, "n_head": 3, "n_positions": 64, "vocab_size": 50})", "n_layer"},
      {R"({"n_layer": 1000000000, "n_embd": 48, "n_head": 3, "n_positions": 64, "vocab_size": 50})", "n_layer"},
      {R"({"n_layer": 2, "n_embd": 50, "n_head": 3, "n_positions": 64, "vocab_size": 50})", "n_head"},
      {R"({"n_layer": 2, "n_embd": "48", "n_head": 3, "n_positions": 64, "vocab_size": 50})", "n_embd"},
      {R"({"n_layer": 2.5, "n_embd": 48, "n_head": 3, "n_positions": 64, "vocab_size": 50})", "n_layer"},
      {R"({"n_layer": 2, "n_embd": 48, "n_head": 3, "n_positions": 0, "vocab_size": 50})", "n_positions"},
      {R"({"n_layer": 2, "n_embd": 48, "n_head": 3, "n_positions": 64, "vocab_size": 0})", "vocab_size"},
      {"{" + base_fields + R"(, "layer_norm_epsilon": 0})", "layer_norm_epsilon"},
      {"{" + base_fields + R"(, "layer_norm_epsilon": -1e-5})", "layer_norm_epsilon"},
      {"{" + base_fields + R"(, "activation_function": "relu"})", "activation_function"},
      {"{" + base_fields + R"(, "model_type": "llama"})", "model_type"},
      {R"({"n_layer": 4000, "n_embd": 200000, "n_head": 1, "n_positions": 64, "vocab_size": 50})", "1e12"},
  };
  for (const auto& c : cases) {
    INFO(c.json);
    try {
      config_from_json(c.json, "cfg.json");
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kInvalidFile);
      CHECK_THAT(e.what(), Catch::Contains("cfg.json") && Catch::Contains(c.field));
    }
  }
}

TEST_CASE("config.json: eos_token_id is kept as given, refused only when negative", "[config][errors]") {
  const std::string base = R"("n_layer": 2, "n_embd": 48, "n_head": 3, "n_positions": 64, "vocab_size": 1000)";
  // Outside the vocabulary (Hugging Face's GPT2Config(vocab_size=1000) writes 50256): kept, not
  // moved to another id; such a model has no end-of-text token.
  CHECK(config_from_json("{" + base + R"(, "eos_token_id": 50256})", "cfg.json").eos_token_id == 50256);
  try {
    config_from_json("{" + base + R"(, "eos_token_id": -3})", "cfg.json");
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidFile);
    CHECK_THAT(e.what(), Catch::Contains("cfg.json") && Catch::Contains("eos_token_id") && Catch::Contains("-3"));
  }
  // Not given: GPT-2's 50256, or the last id of a smaller vocabulary.
  CHECK(config_from_json("{" + base + "}", "cfg.json").eos_token_id == 999);
  CHECK(config_from_json("{" + base + R"(, "eos_token_id": 7})", "cfg.json").eos_token_id == 7);
}

TEST_CASE("config.json: JSON that trips the JSON library is an error naming the file", "[config][errors]") {
  const std::string base = R"("n_layer": 2, "n_embd": 48, "n_head": 3, "n_positions": 64, "vocab_size": 1000)";
  const std::string deep(100000, '[');
  const struct {
    std::string text, expected;
  } cases[] = {
      {"{" + base + R"(, "layer_norm_epsilon": 1e999})", "cfg.json"},          // a number out of range
      {"{" + base + R"(, "n_inner": [[[[1]]]]})", "n_inner"},                   // a value of the wrong type
      {"{" + base + R"(, "n_inner": )" + deep + "}", "nests deeper"},          // no stack overflow
      {"{" + base + std::string("}\0garbage", 9), "trailing bytes"},           // after a NUL byte
      {"{" + base + R"(, "n_layer": 3})", "duplicate key"},                    // ambiguous
  };
  for (const auto& c : cases) {
    INFO(c.text.substr(0, 120));
    try {
      config_from_json(c.text, "cfg.json");
      FAIL("accepted");
    } catch (const Error& e) {
      const std::string message = e.what();
      CHECK(e.code() == ErrorCode::kInvalidFile);
      CHECK_THAT(message, Catch::Contains("cfg.json") && Catch::Contains(c.expected));
      CHECK(message.find("[json.exception") == std::string::npos);
      CHECK(message.find('\n') == std::string::npos);
      CHECK(message.size() < 400);
    }
  }
}
