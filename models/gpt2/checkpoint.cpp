#include "models/gpt2/checkpoint.h"

#include <algorithm>
#include <memory>

#include "engine/io/checkpoint.h"
#include "engine/io/model_directory.h"
#include "models/gpt2/parameter_match.h"

namespace eagerlm::gpt2 {

namespace {

struct Resolved {
  std::shared_ptr<io::Checkpoint> checkpoint;
  Config config;
  std::vector<NamedTensor> tensors;  // every tensor of the checkpoint, shard order then header order
  MatchedParameters matched;         // points into `tensors`
  CheckpointSummary summary;
};

// The checkpoint's tensors as the shared matcher (parameter_match.h) takes them.
std::vector<NamedTensor> named_tensors(const io::Checkpoint& checkpoint) {
  std::vector<NamedTensor> out;
  for (const io::TensorEntry* e : checkpoint.all())
    out.push_back(
        {e->name, e->dtype_name, e->dtype, e->shape, e->data, size_t(e->byte_size()), checkpoint.file_of(e->name)});
  return out;
}

// (A moved vector keeps its elements where they are, so `matched` stays valid in the result.)
Resolved resolve(const std::string& dir) {
  Resolved r;
  const io::ModelDirectory md = io::resolve_model_directory(dir);
  r.config = config_from_file(md.config_path);
  r.checkpoint = std::make_shared<io::Checkpoint>(io::Checkpoint::open(md));
  r.tensors = named_tensors(*r.checkpoint);
  r.matched = match_parameters(r.config, r.tensors, dir, ErrorCode::kInvalidFile);
  CheckpointSummary& s = r.summary;
  s.dir = dir;
  s.config = r.config;
  s.files.push_back(md.config_path);
  for (const auto& shard : md.shard_paths) s.files.push_back(shard);
  s.prefixed = r.matched.prefixed;
  auto add_dtype = [&s](DType dtype) {
    if (std::find(s.dtypes.begin(), s.dtypes.end(), dtype) == s.dtypes.end()) s.dtypes.push_back(dtype);
  };
  bool first_matrix = true;
  for (size_t i = 0; i < r.matched.specs.size(); ++i) {
    const NamedTensor& t = *r.matched.tensors[i];
    s.parameter_count += r.matched.specs[i].shape.numel();
    s.parameter_bytes += t.bytes;
    add_dtype(*t.dtype);
    if (const NamedTensor* scales = r.matched.scales[i]) {
      s.parameter_bytes += scales->bytes;
      s.scale_count += int64_t(scales->bytes / sizeof(float));
      add_dtype(DType::kF32);
    }
    // The matrices' shared weight type (unset when two differ).
    if (!r.matched.specs[i].matrix) continue;
    const auto type = weight_type_of(*t.dtype);
    if (first_matrix) {
      s.weights = type;
      first_matrix = false;
    } else if (s.weights != type) {
      s.weights.reset();
    }
  }
  std::sort(s.dtypes.begin(), s.dtypes.end());
  return r;
}

}  // namespace

CheckpointSummary inspect_checkpoint(const std::string& dir) { return resolve(dir).summary; }

LoadedCheckpoint load_checkpoint(const std::string& dir) {
  const Resolved r = resolve(dir);
  LoadedCheckpoint out;
  out.config = r.config;
  out.summary = r.summary;
  // The tensors keep the mapping alive.
  out.parameters = borrow_parameters(r.matched, r.checkpoint, ErrorCode::kInvalidFile);
  return out;
}

}  // namespace eagerlm::gpt2
