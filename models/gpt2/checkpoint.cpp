#include "models/gpt2/checkpoint.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "engine/core/error.h"
#include "engine/io/model_directory.h"
#include "engine/io/checkpoint.h"

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
  for (; i < bare.size() && bare[i] >= '0' && bare[i] <= '9' && digits < 9; ++i, ++digits)
    v = v * 10 + (bare[i] - '0');
  return digits > 0 && i < bare.size() && bare[i] == '.' ? v : -1;
}

[[noreturn]] void bad(const std::string& file, const std::string& what) {
  throw_error(ErrorCode::kInvalidFile, file + ": " + what);
}

struct Resolved {
  std::shared_ptr<io::Checkpoint> checkpoint;
  Config config;
  std::vector<ParameterSpec> specs;
  std::vector<const io::TensorEntry*> entries;  // same index as specs
  CheckpointSummary summary;
};

Resolved resolve(const std::string& dir) {
  Resolved r;
  const io::ModelDirectory md = io::resolve_model_directory(dir);
  r.config = config_from_file(md.config_path);
  r.checkpoint = std::make_shared<io::Checkpoint>(io::Checkpoint::open(md));
  r.specs = parameter_specs(r.config);
  r.summary.dir = dir;
  r.summary.config = r.config;
  r.summary.files.push_back(md.config_path);
  for (const auto& s : md.shard_paths) r.summary.files.push_back(s);

  // Naming: all names with the `transformer.` prefix, or none (lm_head.weight aside).
  const auto all = r.checkpoint->all();
  size_t prefixed = 0, bare = 0;
  for (const auto* e : all) {
    if (e->name == "lm_head.weight") continue;
    (starts_with(e->name, kPrefix) ? prefixed : bare)++;
  }
  if (prefixed && bare)
    bad(dir, "tensor names mix `transformer.`-prefixed and bare names; expected one convention");
  r.summary.prefixed = prefixed > 0;
  const std::string prefix = r.summary.prefixed ? kPrefix : "";

  std::set<std::string> expected;
  for (const auto& spec : r.specs) {
    const std::string name = prefix + spec.name;
    expected.insert(name);
    const io::TensorEntry* e = r.checkpoint->find(name);
    if (!e) bad(dir, "missing tensor '" + name + "' (required by config n_layer=" +
                         std::to_string(r.config.n_layer) + ", n_embd=" + std::to_string(r.config.n_embd) + ")");
    const std::string file = r.checkpoint->file_of(name);
    if (!e->dtype)
      bad(file, "tensor '" + name + "' has dtype " + e->dtype_name + "; expected F32, F16 or BF16");
    if (Shape(e->shape) != spec.shape)
      bad(file, "tensor '" + name + "' has shape " + Shape(e->shape).to_string() + ", expected " +
                    spec.shape.to_string() + " (Hugging Face Conv1D layout [in, out])");
    r.entries.push_back(e);
    r.summary.parameter_count += spec.shape.numel();
    r.summary.parameter_bytes += size_t(e->end - e->begin);
    if (std::find(r.summary.dtypes.begin(), r.summary.dtypes.end(), *e->dtype) == r.summary.dtypes.end())
      r.summary.dtypes.push_back(*e->dtype);
  }
  std::sort(r.summary.dtypes.begin(), r.summary.dtypes.end());

  for (const auto* e : all) {
    if (expected.count(e->name)) continue;
    const std::string bare_name = r.summary.prefixed && starts_with(e->name, kPrefix)
                                      ? e->name.substr(std::string(kPrefix).size())
                                      : e->name;
    if (is_ignorable_buffer(bare_name)) {
      // A mask buffer of a layer that does not exist means the config and checkpoint disagree.
      const int64_t layer = layer_index(bare_name);
      if (layer >= 0 && layer < r.config.n_layer) continue;
    }
    if (e->name == "lm_head.weight") {
      const io::TensorEntry* wte = r.entries[0];
      const bool same = e->dtype_name == wte->dtype_name && e->shape == wte->shape &&
                        std::equal(static_cast<const char*>(e->data),
                                   static_cast<const char*>(e->data) + (e->end - e->begin),
                                   static_cast<const char*>(wte->data));
      if (!same)
        bad(r.checkpoint->file_of(e->name),
            "lm_head.weight differs from wte.weight; eagerlm supports GPT-2's tied output head only");
      continue;
    }
    if (starts_with(bare_name, "h.")) {
      const std::string layer = bare_name.substr(2, bare_name.find('.', 2) - 2);
      bad(r.checkpoint->file_of(e->name),
          "unexpected tensor '" + e->name + "': layer " + layer + " is beyond config n_layer=" +
              std::to_string(r.config.n_layer) + " (config and checkpoint disagree)");
    }
    bad(r.checkpoint->file_of(e->name), "unexpected tensor '" + e->name + "' for a GPT-2 model");
  }
  return r;
}

}  // namespace

CheckpointSummary inspect_checkpoint(const std::string& dir) { return resolve(dir).summary; }

LoadedCheckpoint load_checkpoint(const std::string& dir) {
  Resolved r = resolve(dir);
  LoadedCheckpoint out;
  out.config = r.config;
  out.summary = r.summary;
  out.parameters.specs = r.specs;
  for (const auto* e : r.entries) {
    const DType dtype = *e->dtype;
    const Shape shape(e->shape);
    const size_t bytes = size_t(e->end - e->begin);
    void* data = const_cast<void*>(e->data);  // read-only mapping; weights are never written
    if (reinterpret_cast<uintptr_t>(data) % dtype_size(dtype) == 0) {
      out.parameters.tensors.push_back(
          Tensor::over(Storage::borrow(data, bytes, Device::kCpu, r.checkpoint), 0, shape, dtype));
    } else {
      // Misaligned data cannot be read as float in place: one copy into aligned memory.
      Tensor t = Tensor::empty(shape, dtype, Device::kCpu);
      std::copy_n(static_cast<const char*>(e->data), bytes, static_cast<char*>(t.raw()));
      out.parameters.tensors.push_back(std::move(t));
    }
  }
  return out;
}

}  // namespace eagerlm::gpt2
