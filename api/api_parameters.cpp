// Parameters as plain data: the list a config implies, fresh parameters drawn as `eagerlm init`
// draws them, and caller-owned views turned into the model's tensors through the same matcher
// that checks checkpoints (models/gpt2/parameter_match.h).
#include <memory>
#include <string>
#include <vector>

#include "api/library_internal.h"
#include "eagerlm/parameters.hpp"
#include "engine/core/dtype.h"
#include "engine/core/text.h"
#include "models/gpt2/initializer.h"
#include "models/gpt2/parameter_match.h"
#include "models/gpt2/parameters.h"

namespace eagerlm {

namespace {

DType storage_dtype(const std::string& name) {
  const auto dtype = dtype_from_name(name);
  if (!dtype) throw Error(ErrorCode::kInvalidArgument, "dtype: expected F32, F16 or BF16, got " + quoted_text(name));
  return *dtype;
}

}  // namespace

std::vector<ParameterInfo> parameter_shapes(const ModelConfig& config, const std::string& dtype) {
  return library::translate_errors([&] {
    const DType type = storage_dtype(dtype);
    std::vector<ParameterInfo> out;
    for (const gpt2::ParameterSpec& spec : gpt2::parameter_specs(library::engine_config(config)))
      out.push_back({spec.name, spec.shape.to_vector(), dtype_name(type), gpt2::parameter_bytes(spec, type)});
    return out;
  });
}

Parameters initialize_parameters(const ModelConfig& config, uint64_t seed, const std::string& dtype) {
  return library::translate_errors([&] {
    gpt2::InitOptions options;
    options.seed = seed;
    options.dtype = storage_dtype(dtype);
    library::apply_cpu_threads();
    auto params = std::make_shared<gpt2::ParameterTensors>(gpt2::initialize(library::engine_config(config), options));
    Parameters out;
    for (size_t i = 0; i < params->specs.size(); ++i) {
      const Tensor& t = params->tensors[i];
      out.tensors.push_back({params->specs[i].name, dtype_name(t.dtype()), t.shape().to_vector(), t.raw(), t.nbytes()});
    }
    out.memory = std::move(params);  // the tensors' one block lives as long as the views
    return out;
  });
}

namespace library {

gpt2::ParameterTensors parameters_from_views(const gpt2::Config& config, const std::vector<TensorView>& views,
                                             const std::shared_ptr<const void>& keep_alive) {
  std::vector<gpt2::NamedTensor> tensors;
  tensors.reserve(views.size());
  for (const TensorView& v : views)
    tensors.push_back({v.name, v.dtype, dtype_from_name(v.dtype), v.shape, v.data, v.bytes, "from_parameters"});
  const gpt2::MatchedParameters matched =
      gpt2::match_parameters(config, tensors, "from_parameters", ErrorCode::kInvalidArgument);
  return gpt2::borrow_parameters(matched, keep_alive, ErrorCode::kInvalidArgument);
}

}  // namespace library
}  // namespace eagerlm
