// Named tensors matched against the parameters a config implies: the one set of rules for every
// source of weights, a checkpoint's files (checkpoint.h) or a caller's memory
// (eagerlm::Model::from_parameters). Every expected tensor must be present, with dtype F32, F16
// or BF16 (a weight matrix also I8, with its F32 scale tensor `<name>_scale`, docs/formats.md), the shape the config
// implies (Conv1D weights [in, out]; never transposed silently) and exactly the bytes that shape needs; names may carry
// the `transformer.` prefix (all or none); `lm_head.weight` may be absent (tied to wte) or equal to wte; the
// attention-mask buffers
// `*.attn.bias` / `*.attn.masked_bias` of existing layers are ignored; anything else is an error
// naming the tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eagerlm/error.hpp"
#include "engine/core/dtype.h"
#include "models/gpt2/config.h"
#include "models/gpt2/parameters.h"

namespace eagerlm::gpt2 {

// One tensor as its source holds it, in host memory.
struct NamedTensor {
  std::string name;
  std::string dtype_name;      // as safetensors spells it, e.g. "F32"
  std::optional<DType> dtype;  // set for F32, F16, BF16 and I8, the types eagerlm holds weights in
  std::vector<int64_t> shape;  // row-major; [] for a scalar
  const void* data = nullptr;  // `bytes` bytes, not necessarily aligned
  size_t bytes = 0;
  std::string origin;  // where it is, for messages: its file, or the caller
};

struct MatchedParameters {
  std::vector<ParameterSpec> specs;         // parameter_specs(config)
  std::vector<const NamedTensor*> tensors;  // same index as specs, pointing into the matched list
  std::vector<const NamedTensor*> scales;   // same index: an I8 matrix's scales, else null
  bool prefixed = false;                    // names carry `transformer.`
};

// Matches `tensors` against parameter_specs(config). Failures throw Error(code): what concerns
// the whole set (a missing tensor, mixed naming) names `source`, what concerns one tensor names
// that tensor's origin. The result points into `tensors`, which must outlive it.
MatchedParameters match_parameters(const Config& config, const std::vector<NamedTensor>& tensors,
                                   const std::string& source, ErrorCode code);

// Host tensors over the matched memory, in spec order, holding `keep_alive` (the owner of that
// memory) for as long as any of them lives. Data misaligned for its dtype is copied once into
// aligned memory; everything else is used in place. I8 matrices get their scales (ParameterTensors::
// scales, one entry per spec, when any matrix is I8), checked finite and >= 0 (errors as above).
ParameterTensors borrow_parameters(const MatchedParameters& matched, const std::shared_ptr<const void>& keep_alive,
                                   ErrorCode code);

// "[768, 2304]", as Shape::to_string writes it, for shapes of any rank.
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace eagerlm::gpt2
