#include "models/gpt2/parameter_match.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <unordered_map>

#include "engine/core/error.h"
#include "engine/core/text.h"

namespace eagerlm::gpt2 {

namespace {

constexpr const char* kPrefix = "transformer.";

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }
bool ends_with(const std::string& s, const std::string& e) {
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

// Buffers some exporters keep: the causal mask, not parameters.
bool is_ignorable_buffer(const std::string& bare) {
  return starts_with(bare, "h.") && (ends_with(bare, ".attn.bias") || ends_with(bare, ".attn.masked_bias"));
}

// The block index of a name "h.<i>.…", or -1 if it has no valid index.
int64_t layer_index(const std::string& bare) {
  int64_t v = 0;
  size_t i = 2, digits = 0;
  for (; i < bare.size() && bare[i] >= '0' && bare[i] <= '9' && digits < 9; ++i, ++digits) v = v * 10 + (bare[i] - '0');
  return digits > 0 && i < bare.size() && bare[i] == '.' ? v : -1;
}

bool same_bytes(const NamedTensor& a, const NamedTensor& b) {
  return a.bytes == b.bytes && (a.bytes == 0 || std::memcmp(a.data, b.data, a.bytes) == 0);
}

// The scale tensor of int8 matrix t (spec): present, F32, of the shape weights.h gives, its bytes.
template <typename Bad>
const NamedTensor& find_scales(const std::unordered_map<std::string, const NamedTensor*>& by_name, const NamedTensor& t,
                               const ParameterSpec& spec, const std::string& prefix, const Bad& bad) {
  const int64_t inputs = *spec.matrix == WeightLayout::kInputMajor ? spec.shape[0] : spec.shape[1];
  if (inputs % kInt8Block != 0)
    bad(t.origin, "tensor " + quoted_text(t.name) + " is I8, but int8 weights need a multiple of " +
                      std::to_string(kInt8Block) + " inputs per output; it has " + std::to_string(inputs));
  const std::string scale_name = prefix + scale_tensor_name(spec.name);
  const Shape want = scale_shape(spec.shape, *spec.matrix);
  const auto found = by_name.find(scale_name);
  if (found == by_name.end())
    bad(t.origin, "missing tensor " + quoted_text(scale_name) + ": the scales of int8 tensor " + quoted_text(t.name) +
                      " (F32 " + want.to_string() + ")");
  const NamedTensor& s = *found->second;
  if (s.dtype_name != "F32" || s.dtype != DType::kF32)
    bad(s.origin,
        "scale tensor " + quoted_text(scale_name) + " has dtype " + quoted_text(s.dtype_name) + "; expected F32");
  if (s.shape != want.to_vector())
    bad(s.origin, "scale tensor " + quoted_text(scale_name) + " has shape " + shape_text(s.shape) + ", expected " +
                      want.to_string() + " (one scale per " + std::to_string(kInt8Block) +
                      " inputs of each output of " + quoted_text(t.name) + " " + spec.shape.to_string() + ")");
  if (s.bytes != size_t(want.numel()) * sizeof(float))
    bad(s.origin, "scale tensor " + quoted_text(scale_name) + " holds " + std::to_string(s.bytes) +
                      " bytes, expected " + std::to_string(size_t(want.numel()) * sizeof(float)));
  if (s.bytes > 0 && s.data == nullptr)
    bad(s.origin, "tensor " + quoted_text(scale_name) + " has no data (a null pointer)");
  return s;
}

// A host tensor over t's memory (kept alive by keep_alive), or an aligned copy when misaligned.
Tensor host_tensor(const NamedTensor& t, const Shape& shape, const std::shared_ptr<const void>& keep_alive) {
  const DType dtype = *t.dtype;
  void* data = const_cast<void*>(t.data);  // weights are never written
  if (reinterpret_cast<uintptr_t>(data) % dtype_size(dtype) == 0)
    return Tensor::over(Storage::borrow(data, t.bytes, Device::kCpu, keep_alive), 0, shape, dtype);
  // Misaligned data cannot be read as float in place: one copy into aligned memory.
  Tensor copy = Tensor::empty(shape, dtype, Device::kCpu);
  if (t.bytes > 0) std::memcpy(copy.raw(), t.data, t.bytes);
  return copy;
}

}  // namespace

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

MatchedParameters match_parameters(const Config& config, const std::vector<NamedTensor>& tensors,
                                   const std::string& source, ErrorCode code) {
  auto bad = [code](const std::string& where, const std::string& what) { throw_error(code, where + ": " + what); };
  MatchedParameters m;
  m.specs = parameter_specs(config);

  // A checkpoint's names are unique by construction (its index is checked); a caller's may not be.
  std::unordered_map<std::string, const NamedTensor*> by_name;
  for (const NamedTensor& t : tensors)
    if (!by_name.emplace(t.name, &t).second) bad(t.origin, "tensor " + quoted_text(t.name) + " is given twice");

  // Naming: all names with the `transformer.` prefix, or none (lm_head.weight aside).
  size_t prefixed = 0, bare = 0;
  for (const NamedTensor& t : tensors) {
    if (t.name == "lm_head.weight") continue;
    (starts_with(t.name, kPrefix) ? prefixed : bare)++;
  }
  if (prefixed && bare) bad(source, "tensor names mix `transformer.`-prefixed and bare names; expected one convention");
  m.prefixed = prefixed > 0;
  const std::string prefix = m.prefixed ? kPrefix : "";

  std::set<std::string> expected;
  for (const ParameterSpec& spec : m.specs) {
    const std::string name = prefix + spec.name;
    expected.insert(name);
    const auto found = by_name.find(name);
    if (found == by_name.end())
      bad(source, "missing tensor " + quoted_text(name) + " (required by config n_layer=" +
                      std::to_string(config.n_layer) + ", n_embd=" + std::to_string(config.n_embd) + ")");
    const NamedTensor& t = *found->second;
    if (!t.dtype)
      bad(t.origin, "tensor " + quoted_text(name) + " has dtype " + quoted_text(t.dtype_name) +
                        "; expected F32, F16 or BF16" + (spec.matrix ? " (or I8 with a scale tensor)" : ""));
    if (*t.dtype == DType::kI8 && !spec.matrix)
      bad(t.origin,
          "tensor " + quoted_text(name) + " is I8; only weight matrices (wte and the linear layers) may be int8");
    if (*t.dtype == DType::kI32) bad(t.origin, "tensor " + quoted_text(name) + " has dtype I32; expected a float type");
    if (t.shape != spec.shape.to_vector())
      bad(t.origin, "tensor " + quoted_text(name) + " has shape " + shape_text(t.shape) + ", expected " +
                        spec.shape.to_string() + " (Hugging Face Conv1D layout [in, out])");
    const size_t want = size_t(spec.shape.numel()) * dtype_size(*t.dtype);
    if (t.bytes != want)
      bad(t.origin, "tensor " + quoted_text(name) + " holds " + std::to_string(t.bytes) + " bytes, expected " +
                        std::to_string(want) + " (shape " + spec.shape.to_string() + " as " + dtype_name(*t.dtype) +
                        ")");
    if (want > 0 && t.data == nullptr) bad(t.origin, "tensor " + quoted_text(name) + " has no data (a null pointer)");
    m.tensors.push_back(&t);
    m.scales.push_back(*t.dtype == DType::kI8 ? &find_scales(by_name, t, spec, prefix, bad) : nullptr);
    if (m.scales.back()) expected.insert(m.scales.back()->name);
  }

  for (const NamedTensor& t : tensors) {
    if (expected.count(t.name)) continue;
    const std::string bare_name =
        m.prefixed && starts_with(t.name, kPrefix) ? t.name.substr(std::string(kPrefix).size()) : t.name;
    if (is_ignorable_buffer(bare_name)) {
      // A mask buffer of a layer that does not exist means the config and the tensors disagree.
      const int64_t layer = layer_index(bare_name);
      if (layer >= 0 && layer < config.n_layer) continue;
    }
    if (t.name == "lm_head.weight") {
      const NamedTensor& wte = *m.tensors[0];
      if (!(t.dtype_name == wte.dtype_name && t.shape == wte.shape && same_bytes(t, wte)))
        bad(t.origin, "lm_head.weight differs from wte.weight; eagerlm supports GPT-2's tied output head only");
      continue;
    }
    if (starts_with(bare_name, "h.")) {
      const std::string layer = bare_name.substr(2, bare_name.find('.', 2) - 2);
      bad(t.origin, "unexpected tensor " + quoted_text(t.name) + ": layer " + escape_for_message(layer, 12) +
                        " is beyond config n_layer=" + std::to_string(config.n_layer) +
                        " (config and checkpoint disagree)");
    }
    bad(t.origin, "unexpected tensor " + quoted_text(t.name) + " for a GPT-2 model");
  }
  return m;
}

ParameterTensors borrow_parameters(const MatchedParameters& matched, const std::shared_ptr<const void>& keep_alive,
                                   ErrorCode code) {
  ParameterTensors out;
  out.specs = matched.specs;
  const bool any_scales =
      std::any_of(matched.scales.begin(), matched.scales.end(), [](const NamedTensor* s) { return s != nullptr; });
  for (size_t i = 0; i < matched.specs.size(); ++i) {
    out.tensors.push_back(host_tensor(*matched.tensors[i], matched.specs[i].shape, keep_alive));
    if (!any_scales) continue;
    const NamedTensor* s = i < matched.scales.size() ? matched.scales[i] : nullptr;
    if (!s) {
      out.scales.emplace_back();
      continue;
    }
    Tensor scales = host_tensor(*s, Shape(s->shape), keep_alive);
    const float* v = scales.f32();
    for (int64_t j = 0; j < scales.numel(); ++j)
      if (!(v[j] >= 0.0f) || v[j] == std::numeric_limits<float>::infinity())
        throw_error(code, s->origin + ": scale tensor " + quoted_text(s->name) + " holds " + std::to_string(v[j]) +
                              " at index " + std::to_string(j) +
                              "; int8 scales are finite and >= 0 (max|w| / 127 of a block)");
    out.scales.push_back(std::move(scales));
  }
  return out;
}

}  // namespace eagerlm::gpt2
