// ModelConfig, parameter_shapes (the dry run) and initialize_parameters, whose tensors come back
// as NumPy arrays over the library's own block of memory: no copy, alive while any array is.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "python/src/bindings.h"

namespace eagerlm::python {

namespace {

// How NumPy holds one element of a storage type; BF16 travels as uint16 (NumPy has no bfloat16;
// the package views it as ml_dtypes.bfloat16).
nb::dlpack::dtype numpy_dtype(const std::string& dtype) {
  if (dtype == "F32") return nb::dtype<float>();
  if (dtype == "F16") return {uint8_t(nb::dlpack::dtype_code::Float), 16, 1};
  if (dtype == "BF16") return nb::dtype<uint16_t>();
  throw Error(ErrorCode::kInternal, "no NumPy type for dtype " + dtype);
}

// [(name, array)] in canonical order, every array a view of `p.memory`.
nb::list as_arrays(Parameters&& p) {
  auto* memory = new std::shared_ptr<void>(std::move(p.memory));
  const nb::capsule owner(memory, [](void* m) noexcept { delete static_cast<std::shared_ptr<void>*>(m); });
  nb::list out;
  for (const TensorView& v : p.tensors) {
    std::vector<size_t> shape(v.shape.begin(), v.shape.end());
    // The block is freshly allocated and only these arrays see it: they may be written.
    nb::ndarray<nb::numpy> array(const_cast<void*>(v.data), shape.size(), shape.data(), owner, nullptr,
                                 numpy_dtype(v.dtype));
    out.append(nb::make_tuple(v.name, array));
  }
  return out;
}

}  // namespace

void bind_parameters(nb::module_& m) {
  nb::class_<ModelConfig>(m, "ModelConfig", "A GPT-2 config (eagerlm::ModelConfig), named as in config.json.")
      .def(nb::init<>(), "GPT-2 124M's config.")
      .def_rw("n_layer", &ModelConfig::n_layer)
      .def_rw("n_embd", &ModelConfig::n_embd)
      .def_rw("n_head", &ModelConfig::n_head)
      .def_rw("n_positions", &ModelConfig::n_positions)
      .def_rw("vocab_size", &ModelConfig::vocab_size)
      .def_rw("n_inner", &ModelConfig::n_inner)
      .def_rw("layer_norm_epsilon", &ModelConfig::layer_norm_epsilon)
      .def_rw("initializer_range", &ModelConfig::initializer_range)
      .def_rw("activation_function", &ModelConfig::activation_function)
      .def_rw("eos_token_id", &ModelConfig::eos_token_id)
      .def_static("load", &ModelConfig::load, nb::arg("preset_or_config"), nb::call_guard<nb::gil_scoped_release>(),
                  "A preset name, a config.json path or a directory holding one.")
      .def_static("from_json", &ModelConfig::from_json, nb::arg("text"), nb::arg("source") = "config",
                  "config.json text (GPT-2's names or Hugging Face's aliases).")
      .def("to_json", &ModelConfig::to_json, "Hugging Face config.json text.");

  nb::class_<ParameterInfo>(m, "ParameterInfo", "One parameter a config implies.")
      .def_ro("name", &ParameterInfo::name)
      .def_ro("shape", &ParameterInfo::shape)
      .def_ro("dtype", &ParameterInfo::dtype)
      .def_ro("bytes", &ParameterInfo::bytes);

  m.def("parameter_shapes", &parameter_shapes, nb::arg("config"), nb::arg("dtype") = "F32",
        "The parameters of a config (name, shape, dtype, bytes), nothing allocated.");
  m.def(
      "initialize_parameters",
      [](const ModelConfig& config, uint64_t seed, const std::string& dtype) {
        Parameters p;
        {
          nb::gil_scoped_release release;
          p = initialize_parameters(config, seed, dtype);
        }
        return as_arrays(std::move(p));
      },
      nb::arg("config"), nb::arg("seed") = 0, nb::arg("dtype") = "F32",
      "Fresh parameters as [(name, array)], bit for bit those `eagerlm init` writes.");
}

}  // namespace eagerlm::python
