// The C API's library-wide calls and model calls (load, initialize, tokenize, detokenize,
// logits, score), each a thin guarded wrapper over the C++ API.
#include <limits>
#include <vector>

#include "api/c_api_support.h"

using eagerlm::capi::copy_out;
using eagerlm::capi::copy_text_out;
using eagerlm::capi::fail;
using eagerlm::capi::guarded;
using eagerlm::capi::require;
using eagerlm::capi::split_sequences;

namespace {
eagerlm::LoadOptions load_options(const char* weights, const char* kv_type, const char* gemm_math = nullptr) {
  eagerlm::LoadOptions options;
  if (weights) options.weights = weights;
  if (kv_type && *kv_type) options.kv_type = kv_type;
  if (gemm_math && *gemm_math) options.gemm_math = gemm_math;
  return options;
}

eagerlm::LoadOptions load_options(const eagerlm_load_options* o) {
  return o ? load_options(o->weights, o->kv_type, o->gemm_math) : eagerlm::LoadOptions{};
}

// info() gives std::strings; the C API hands out the library's own literals.
const char* type_literal(const std::string& name) {
  for (const char* known : {"f32", "bf16", "f16", "int8", "fp32", "tf32"})
    if (name == known) return known;
  return "";
}

// The plain and the _as forms, `fn` naming the one called in messages.
eagerlm_status load_model(const char* fn, const char* directory, eagerlm_device device,
                          const eagerlm::LoadOptions& options, eagerlm_model** model) {
  return guarded([&] {
    require(model, fn, "model");
    *model = nullptr;
    require(directory, fn, "directory");
    *model = new eagerlm_model{eagerlm::Model::load(directory, eagerlm::capi::to_device(device), options)};
  });
}

eagerlm_status initialize_model(const char* fn, const char* preset_or_config, uint64_t seed, eagerlm_device device,
                                const eagerlm::LoadOptions& options, eagerlm_model** model) {
  return guarded([&] {
    require(model, fn, "model");
    *model = nullptr;
    require(preset_or_config, fn, "preset_or_config");
    *model = new eagerlm_model{
        eagerlm::Model::initialize(preset_or_config, seed, eagerlm::capi::to_device(device), options)};
  });
}
}  // namespace

extern "C" {

const char* eagerlm_version(void) { return eagerlm::version(); }

const char* eagerlm_finish_reason_name(eagerlm_finish_reason reason) {
  switch (reason) {
    case EAGERLM_FINISH_EOS: return "eos";
    case EAGERLM_FINISH_STOP: return "stop";
    case EAGERLM_FINISH_LENGTH: return "length";
    case EAGERLM_FINISH_CALLBACK: return "callback";
    default: break;
  }
  return "unknown";
}

int eagerlm_cuda_available(void) {
  try {
    return eagerlm::cuda_available() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

eagerlm_status eagerlm_set_cpu_threads(int n) {
  return guarded([&] { eagerlm::set_cpu_threads(n); });
}

eagerlm_status eagerlm_model_load(const char* directory, eagerlm_device device, eagerlm_model** model) {
  return load_model("eagerlm_model_load", directory, device, {}, model);
}

eagerlm_status eagerlm_model_load_as(const char* directory, eagerlm_device device, const char* weights,
                                     const char* kv_type, eagerlm_model** model) {
  return load_model("eagerlm_model_load_as", directory, device, load_options(weights, kv_type), model);
}

eagerlm_status eagerlm_model_initialize(const char* preset_or_config, uint64_t seed, eagerlm_device device,
                                        eagerlm_model** model) {
  return initialize_model("eagerlm_model_initialize", preset_or_config, seed, device, {}, model);
}

eagerlm_status eagerlm_model_initialize_as(const char* preset_or_config, uint64_t seed, eagerlm_device device,
                                           const char* weights, const char* kv_type, eagerlm_model** model) {
  return initialize_model("eagerlm_model_initialize_as", preset_or_config, seed, device,
                          load_options(weights, kv_type), model);
}

eagerlm_status eagerlm_model_load_with(const char* directory, eagerlm_device device, const eagerlm_load_options* options,
                                       eagerlm_model** model) {
  return load_model("eagerlm_model_load_with", directory, device, load_options(options), model);
}

eagerlm_status eagerlm_model_initialize_with(const char* preset_or_config, uint64_t seed, eagerlm_device device,
                                             const eagerlm_load_options* options, eagerlm_model** model) {
  return initialize_model("eagerlm_model_initialize_with", preset_or_config, seed, device, load_options(options),
                          model);
}

void eagerlm_model_free(eagerlm_model* model) { delete model; }

const char* eagerlm_model_weights(const eagerlm_model* model) {
  try {
    return model ? type_literal(model->model.info().weights) : "";
  } catch (...) {
    return "";
  }
}

const char* eagerlm_model_kv_type(const eagerlm_model* model) {
  try {
    return model ? type_literal(model->model.info().kv_type) : "";
  } catch (...) {
    return "";
  }
}

const char* eagerlm_model_gemm_math(const eagerlm_model* model) {
  try {
    return model ? type_literal(model->model.info().gemm_math) : "";
  } catch (...) {
    return "";
  }
}

size_t eagerlm_model_vocab_size(const eagerlm_model* model) {
  try {
    return model ? model->model.info().vocab_size : 0;
  } catch (...) {
    return 0;
  }
}

size_t eagerlm_model_context_length(const eagerlm_model* model) {
  try {
    return model ? model->model.info().context_length : 0;
  } catch (...) {
    return 0;
  }
}

int32_t eagerlm_model_eos_token_id(const eagerlm_model* model) {
  try {
    return model ? model->model.info().eos_token_id : -1;
  } catch (...) {
    return -1;
  }
}

eagerlm_status eagerlm_tokenize(const eagerlm_model* model, const char* text, size_t text_size, int parse_special,
                                int32_t* ids, size_t capacity, size_t* count) {
  return guarded([&] {
    require(model, "eagerlm_tokenize", "model");
    if (text_size > 0) require(text, "eagerlm_tokenize", "text");
    const std::vector<int32_t> out =
        model->model.tokenize(std::string_view(text_size ? text : "", text_size), parse_special != 0);
    copy_out("eagerlm_tokenize", out.data(), out.size(), ids, capacity, count);
  });
}

eagerlm_status eagerlm_detokenize(const eagerlm_model* model, const int32_t* ids, size_t n_ids, char* text,
                                  size_t capacity, size_t* size) {
  return guarded([&] {
    require(model, "eagerlm_detokenize", "model");
    if (n_ids > 0) require(ids, "eagerlm_detokenize", "ids");
    const std::string out = model->model.detokenize(std::vector<int32_t>(ids, ids + n_ids));
    copy_text_out("eagerlm_detokenize", out, text, capacity, size);
  });
}

eagerlm_status eagerlm_logits(const eagerlm_model* model, const int32_t* ids, const size_t* lengths, size_t batch,
                              float* logits, size_t capacity, size_t* count) {
  return guarded([&] {
    const char* fn = "eagerlm_logits";
    require(model, fn, "model");
    require(count, fn, "count");
    const auto sequences = split_sequences(fn, ids, lengths, batch);
    const size_t vocab = model->model.info().vocab_size;
    size_t rows = 0;
    for (const auto& s : sequences) rows += s.size();
    if (vocab > 0 && rows > std::numeric_limits<size_t>::max() / vocab)
      fail(EAGERLM_ERROR_INVALID_ARGUMENT, "eagerlm_logits: the output size overflows size_t");
    const size_t needed = rows * vocab;
    // The size is known without running the model: answer a size query cheaply.
    *count = needed;
    if (!logits) return;
    if (capacity < needed)
      fail(EAGERLM_ERROR_BUFFER_TOO_SMALL, "eagerlm_logits: the buffer holds " + std::to_string(capacity) +
                                               " floats; " + std::to_string(needed) + " are needed");
    const auto out = model->model.logits_batch(sequences);
    float* at = logits;
    for (const auto& row : out) at = std::copy(row.begin(), row.end(), at);
  });
}

eagerlm_status eagerlm_score(const eagerlm_model* model, const int32_t* ids, const size_t* lengths, size_t batch,
                             float* logprobs, size_t capacity, size_t* count) {
  return guarded([&] {
    const char* fn = "eagerlm_score";
    require(model, fn, "model");
    require(count, fn, "count");
    const auto sequences = split_sequences(fn, ids, lengths, batch);
    size_t needed = 0;
    for (const auto& s : sequences) needed += s.empty() ? 0 : s.size() - 1;
    // The size is known without running the model: answer a size query cheaply.
    *count = needed;
    if (!logprobs) return;
    if (capacity < needed)
      fail(EAGERLM_ERROR_BUFFER_TOO_SMALL, "eagerlm_score: the buffer holds " + std::to_string(capacity) + " floats; " +
                                               std::to_string(needed) + " are needed");
    const auto out = model->model.score_batch(sequences);
    float* at = logprobs;
    for (const auto& values : out) at = std::copy(values.begin(), values.end(), at);
  });
}

}  // extern "C"
