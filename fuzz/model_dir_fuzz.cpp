// libFuzzer target: a whole model directory as the loader meets it. The input holds up to three
// files separated by "\n=====\n": config.json, model.safetensors, tokenizer.json (an empty part
// is a missing file). The directory goes through the one loader (models/gpt2/model_source.h:
// tokenizer files, the vocabulary check, every tensor's name, dtype and shape, conversion), and a
// model that loads and is small runs one forward step on a few ids.
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "models/gpt2/forward.h"
#include "models/gpt2/model_source.h"

namespace {

std::vector<std::string_view> split(std::string_view text) {
  constexpr std::string_view kSeparator = "\n=====\n";
  std::vector<std::string_view> parts;
  while (parts.size() < 2) {
    const size_t at = text.find(kSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(text.substr(0, at));
    text.remove_prefix(at + kSeparator.size());
  }
  parts.push_back(text);
  parts.resize(3);
  return parts;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = [] {
    const std::string d = eagerlm::fuzz::scratch_dir() + "/model";
    std::filesystem::create_directories(d);
    return d;
  }();
  const std::vector<std::string_view> parts = split(std::string_view(reinterpret_cast<const char*>(data), size));
  const char* names[] = {"model/config.json", "model/model.safetensors", "model/tokenizer.json"};
  for (size_t i = 0; i < 3; ++i) {
    if (parts[i].empty())
      eagerlm::fuzz::remove_scratch(names[i]);
    else
      eagerlm::fuzz::write_scratch(names[i], parts[i]);
  }
  eagerlm::fuzz::expect_clean([&] {
    eagerlm::gpt2::ModelSource source;
    source.directory = dir;
    const eagerlm::gpt2::LoadedModel loaded = eagerlm::gpt2::load_model(source, eagerlm::Device::kCpu);
    const eagerlm::gpt2::Config& c = loaded.model->config();
    if (loaded.model->parameter_count() > 200000 || c.n_positions > 256) return;
    eagerlm::gpt2::ForwardLimits limits;
    limits.max_len = std::min<int64_t>(c.n_positions, 4);
    eagerlm::gpt2::ForwardPass forward(loaded.model, limits);
    std::vector<int32_t> ids;
    for (int64_t i = 0; i < limits.max_len; ++i) ids.push_back(int32_t(i % c.vocab_size));
    (void)forward.step({{0, 0, ids.data(), int32_t(ids.size())}}, eagerlm::gpt2::LogitsFor::kLastToken);
  });
  return 0;
}
