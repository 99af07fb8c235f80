// eagerlm::Model: loading or initializing a GPT-2 model with its tokenizer, tokenizing, and
// logits for a batch of sequences (a fresh ForwardPass per call, so calls never share state).
#include <algorithm>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "eagerlm/model.hpp"
#include "engine/core/device.h"
#include "models/gpt2/config.h"
#include "models/gpt2/forward.h"
#include "models/gpt2/initializer.h"
#include "models/library/library_internal.h"

namespace eagerlm {

namespace {

namespace fs = std::filesystem;

void require_device(Device device) {
  if (device != Device::kCpu && device != Device::kCuda)
    throw Error(ErrorCode::kInvalidArgument, "device: expected cpu or cuda, got value " + std::to_string(int(device)));
  if (device == Device::kCuda && !cuda_available())
    throw Error(ErrorCode::kUnsupported, std::string("device cuda: ") + cuda_unavailable_reason());
}

// A preset's config, or the config.json that `spec` names (directly or as its directory).
gpt2::Config config_for(const std::string& spec) {
  const auto& presets = gpt2::preset_names();
  if (std::find(presets.begin(), presets.end(), spec) != presets.end()) return gpt2::preset(spec);
  std::string names;
  for (const auto& p : presets) names += (names.empty() ? "" : ", ") + p;
  if (spec.empty()) throw Error(ErrorCode::kInvalidArgument, "initialize: expected a preset (" + names + ") or a config.json path, got an empty string");
  std::error_code ec;
  fs::path path(spec);
  if (fs::is_directory(path, ec)) path /= "config.json";
  if (!fs::is_regular_file(path, ec))
    throw Error(ErrorCode::kIo, "initialize: '" + spec + "' is neither a preset (" + names +
                                    ") nor a config.json file (or a directory holding one)");
  return gpt2::config_from_file(path.string());
}

void check_sequence(const std::vector<int32_t>& ids, size_t index, int64_t context) {
  if (ids.empty()) throw Error(ErrorCode::kInvalidArgument, "logits: sequence " + std::to_string(index) + " is empty");
  if (int64_t(ids.size()) > context)
    throw Error(ErrorCode::kInvalidArgument, "logits: sequence " + std::to_string(index) + " has " +
                                                 std::to_string(ids.size()) + " tokens, more than the model's context length " +
                                                 std::to_string(context));
}

}  // namespace

Model::Model(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

Model Model::load(const std::string& directory, Device device) {
  return library::translate_errors([&] {
    require_device(device);
    library::apply_cpu_threads();
    auto impl = std::make_shared<Impl>(Impl{gpt2::Model::load(directory, device),
                                            Tokenizer::for_model_directory(directory), directory});
    return Model(std::move(impl));
  });
}

Model Model::initialize(const std::string& preset_or_config, uint64_t seed, Device device) {
  return library::translate_errors([&] {
    require_device(device);
    library::apply_cpu_threads();
    const gpt2::Config config = config_for(preset_or_config);
    gpt2::InitOptions options;
    options.seed = seed;
    options.device = device;
    auto model = gpt2::Model::from_parameters(config, gpt2::initialize(config, options), device);
    auto impl = std::make_shared<Impl>(
        Impl{std::move(model), Tokenizer::gpt2(), preset_or_config + " initialized from seed " + std::to_string(seed)});
    return Model(std::move(impl));
  });
}

ModelInfo Model::info() const {
  return library::translate_errors([&] {
    const gpt2::Config& c = impl_->model->config();
    ModelInfo info;
    info.n_layer = size_t(c.n_layer);
    info.n_embd = size_t(c.n_embd);
    info.n_head = size_t(c.n_head);
    info.context_length = size_t(c.n_positions);
    info.vocab_size = size_t(c.vocab_size);
    info.eos_token_id = int32_t(c.eos_token_id);
    info.parameter_count = size_t(impl_->model->parameter_count());
    info.device = impl_->model->device();
    info.source = impl_->source;
    return info;
  });
}

std::vector<int32_t> Model::tokenize(std::string_view text, bool parse_special) const {
  return library::translate_errors([&] {
    EncodeOptions options;
    options.parse_special = parse_special;
    return impl_->tokenizer.encode(text, options);
  });
}

std::string Model::detokenize(const std::vector<int32_t>& ids) const {
  return library::translate_errors([&] { return impl_->tokenizer.decode(ids); });
}

std::vector<float> Model::logits(const std::vector<int32_t>& ids) const {
  return std::move(logits_batch({ids})[0]);
}

std::vector<std::vector<float>> Model::logits_batch(const std::vector<std::vector<int32_t>>& batch) const {
  return library::translate_errors([&] {
    const gpt2::Config& c = impl_->model->config();
    const size_t vocab = size_t(c.vocab_size);
    std::vector<std::vector<float>> out(batch.size());
    if (batch.empty()) return out;
    int64_t total = 0, longest = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
      check_sequence(batch[i], i, c.n_positions);
      total += int64_t(batch[i].size());
      longest = std::max(longest, int64_t(batch[i].size()));
    }
    if (batch.size() > size_t(std::numeric_limits<int32_t>::max()))
      throw Error(ErrorCode::kInvalidArgument, "logits: too many sequences in one batch");
    library::apply_cpu_threads();

    gpt2::ForwardLimits limits;
    limits.max_slots = int64_t(batch.size());
    limits.max_len = longest;
    limits.max_step_rows = std::min<int64_t>(total, 512);  // longer inputs go through in chunks
    limits.all_logits = true;
    gpt2::ForwardPass forward(impl_->model, limits);
    for (size_t i = 0; i < batch.size(); ++i) out[i].resize(batch[i].size() * vocab);

    // Pack chunks of the sequences into steps of at most max_step_rows tokens, as prefill does.
    std::vector<size_t> done(batch.size(), 0);
    std::vector<SequenceStep> step;
    std::vector<size_t> in_step;
    const size_t row_bytes = vocab * sizeof(float);
    for (;;) {
      step.clear();
      in_step.clear();
      int64_t rows = 0;
      for (size_t i = 0; i < batch.size() && rows < limits.max_step_rows; ++i) {
        if (done[i] == batch[i].size()) continue;
        const int64_t n = std::min<int64_t>(int64_t(batch[i].size() - done[i]), limits.max_step_rows - rows);
        step.push_back({int32_t(i), int32_t(done[i]), batch[i].data() + done[i], int32_t(n)});
        in_step.push_back(i);
        rows += n;
      }
      if (step.empty()) break;
      const Tensor logits = forward.step(step, gpt2::LogitsFor::kAllTokens);  // [rows, vocab], step order
      const char* src = static_cast<const char*>(logits.raw());
      for (size_t k = 0; k < step.size(); ++k) {
        const size_t i = in_step[k], n = size_t(step[k].n_tokens);
        device_copy(out[i].data() + done[i] * vocab, Device::kCpu, src, logits.device(), n * row_bytes);
        src += n * row_bytes;
        done[i] += n;
      }
    }
    return out;
  });
}

}  // namespace eagerlm
