// eagerlm-api-generate: generation through the public C++ API (libeagerlm.so) alone, printed as
// JSON, so that the Python package's tests (test/python_package/) can compare the package with
// the C++ API as well as with `eagerlm generate --json`. Test tooling, not part of the CLI.
//
//   eagerlm-api-generate MODEL_DIR OPTIONS_JSON PROMPT [PROMPT ...]
//
// OPTIONS_JSON is an object of GenerateOptions fields by their C++ names (e.g.
// {"max_new_tokens": 8, "temperature": 0.7, "seed": 3, "stop": ["\n"], "logit_bias": [[11, -5]]}),
// plus "max_batch" / "max_length" for the Generator. A PROMPT starting with "ids:" is token ids
// ("ids:15496,11"); anything else is text. Prints {"results": [...]} or, on an eagerlm::Error,
// {"error": {"code": ..., "message": ...}} with exit status 1.
#include <eagerlm/eagerlm.hpp>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nlohmann::json;

eagerlm::GenerateOptions options_from(const json& j) {
  eagerlm::GenerateOptions o;
  for (const auto& [key, value] : j.items()) {
    if (key == "max_new_tokens")
      o.max_new_tokens = value.get<size_t>();
    else if (key == "min_new_tokens")
      o.min_new_tokens = value.get<size_t>();
    else if (key == "temperature")
      o.temperature = value.get<float>();
    else if (key == "top_k")
      o.top_k = value.get<size_t>();
    else if (key == "top_p")
      o.top_p = value.get<float>();
    else if (key == "min_p")
      o.min_p = value.get<float>();
    else if (key == "repetition_penalty")
      o.repetition_penalty = value.get<float>();
    else if (key == "presence_penalty")
      o.presence_penalty = value.get<float>();
    else if (key == "frequency_penalty")
      o.frequency_penalty = value.get<float>();
    else if (key == "logit_bias")
      o.logit_bias = value.get<std::vector<std::pair<int32_t, float>>>();
    else if (key == "no_repeat_ngram_size")
      o.no_repeat_ngram_size = value.get<size_t>();
    else if (key == "seed")
      o.seed = value.get<uint64_t>();
    else if (key == "stop")
      o.stop = value.get<std::vector<std::string>>();
    else if (key == "stop_token_ids")
      o.stop_token_ids = value.get<std::vector<int32_t>>();
    else if (key == "ignore_eos")
      o.ignore_eos = value.get<bool>();
    else if (key == "logprobs")
      o.logprobs = value.get<bool>();
    else if (key == "top_logprobs")
      o.top_logprobs = value.get<size_t>();
    else if (key == "n")
      o.n = value.get<size_t>();
    else if (key == "num_beams")
      o.num_beams = value.get<size_t>();
    else if (key == "length_penalty")
      o.length_penalty = value.get<float>();
    else if (key == "early_stopping")
      o.early_stopping = value.get<bool>();
    else if (key == "num_return_sequences")
      o.num_return_sequences = value.get<size_t>();
    else if (key != "max_batch" && key != "max_length")
      throw std::runtime_error("unknown option " + key);
  }
  return o;
}

std::vector<int32_t> parse_ids(const std::string& text) {
  std::vector<int32_t> ids;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) ids.push_back(int32_t(std::stol(item)));
  return ids;
}

json result_json(const eagerlm::Result& r) {
  json top = json::array();
  for (const auto& alternatives : r.top_logprobs) {
    json at = json::array();
    for (const auto& a : alternatives) at.push_back({{"id", a.id}, {"logprob", a.logprob}});
    top.push_back(at);
  }
  return {
      {"text", r.text},         {"ids", r.ids},        {"finish_reason", eagerlm::finish_reason_name(r.finish_reason)},
      {"logprobs", r.logprobs}, {"top_logprobs", top}, {"score", r.score},
      {"seed", r.seed},         {"index", r.index},    {"sample", r.sample}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: eagerlm-api-generate MODEL_DIR OPTIONS_JSON PROMPT [PROMPT ...]\n");
    return 2;
  }
  try {
    const json options = json::parse(argv[2]);
    const eagerlm::Model model = eagerlm::Model::load(argv[1]);
    eagerlm::Generator generator(model, options.value("max_batch", size_t(1)), options.value("max_length", size_t(0)));
    std::vector<std::string> texts;
    std::vector<std::vector<int32_t>> ids;
    for (int i = 3; i < argc; ++i) {
      const std::string prompt = argv[i];
      if (prompt.rfind("ids:", 0) == 0)
        ids.push_back(parse_ids(prompt.substr(4)));
      else
        texts.push_back(prompt);
    }
    if (!texts.empty() && !ids.empty()) throw std::runtime_error("give text prompts or id prompts, not both");
    const eagerlm::GenerateOptions o = options_from(options);
    const std::vector<eagerlm::Result> results =
        ids.empty() ? generator.generate_batch(texts, o) : generator.generate_tokens(ids, o);
    json out = {{"results", json::array()}};
    for (const auto& r : results) out["results"].push_back(result_json(r));
    std::cout << out.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    return 0;
  } catch (const eagerlm::Error& e) {
    const json error = {{"code", eagerlm::error_code_name(e.code())}, {"message", e.what()}};
    std::cout << json{{"error", error}}.dump() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "eagerlm-api-generate: %s\n", e.what());
    return 2;
  }
}
