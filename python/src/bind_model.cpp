// eagerlm::Model: loading, initializing, building over the caller's arrays (from_parameters),
// tokenizing, and logits as NumPy arrays that own the library's result (no copy). The GIL is
// released wherever the engine computes or reads files.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "python/src/bindings.h"

namespace eagerlm::python {

namespace {

using Bytes = nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// A Python object held by the library (the arrays under a model's weights): released with the GIL
// taken, from whichever thread drops the last Model or Generator over it.
std::shared_ptr<const void> hold(nb::object object) {
  PyObject* held = object.release().ptr();
  return std::shared_ptr<const void>(held, [](const void* p) {
    if (!Py_IsInitialized()) return;  // the interpreter is gone, and the object with it
    const PyGILState_STATE state = PyGILState_Ensure();
    Py_DECREF(static_cast<PyObject*>(const_cast<void*>(p)));
    PyGILState_Release(state);
  });
}

// tensors: [(name, dtype, shape, bytes)] where bytes is the array's memory viewed as uint8, and
// the list itself is what keeps the arrays alive.
Model from_parameters(const ModelConfig& config, nb::list tensors, const std::string& device) {
  std::vector<TensorView> views;
  views.reserve(tensors.size());
  for (nb::handle item : tensors) {
    auto [name, dtype, shape, bytes] =
        nb::cast<std::tuple<std::string, std::string, std::vector<int64_t>, Bytes>>(item);
    views.push_back({std::move(name), std::move(dtype), std::move(shape), bytes.data(), bytes.size()});
  }
  std::shared_ptr<const void> keep_alive = hold(nb::borrow(tensors));
  const Device d = parse_device(device);
  nb::gil_scoped_release release;
  return Model::from_parameters(config, views, std::move(keep_alive), d);
}

// One sequence's logits [len, vocab] as a NumPy array that owns the vector they came in.
nb::ndarray<nb::numpy, float, nb::ndim<2>> as_array(std::vector<float>&& logits, size_t vocab) {
  auto* owned = new std::vector<float>(std::move(logits));
  const nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  const size_t shape[2] = {owned->size() / vocab, vocab};
  return nb::ndarray<nb::numpy, float, nb::ndim<2>>(owned->data(), 2, shape, owner);
}

}  // namespace

void bind_model(nb::module_& m) {
  nb::class_<ModelInfo>(m, "ModelInfo", "What Model.info reports (eagerlm::ModelInfo).")
      .def_ro("n_layer", &ModelInfo::n_layer)
      .def_ro("n_embd", &ModelInfo::n_embd)
      .def_ro("n_head", &ModelInfo::n_head)
      .def_ro("context_length", &ModelInfo::context_length)
      .def_ro("vocab_size", &ModelInfo::vocab_size)
      .def_ro("eos_token_id", &ModelInfo::eos_token_id)
      .def_ro("parameter_count", &ModelInfo::parameter_count)
      .def_prop_ro("device", [](const ModelInfo& i) { return std::string(device_name(i.device)); })
      .def_ro("source", &ModelInfo::source)
      .def_ro("weights", &ModelInfo::weights)
      .def_ro("kv_type", &ModelInfo::kv_type)
      .def_ro("gemm_math", &ModelInfo::gemm_math);

  // Types and math only: progress reporting stays on the C++ side.
  nb::class_<LoadOptions>(m, "LoadOptions",
                          "How a model is held (eagerlm::LoadOptions): weight and KV cache types, GEMM math.")
      .def(nb::init<>())
      .def_rw("weights", &LoadOptions::weights)
      .def_rw("kv_type", &LoadOptions::kv_type)
      .def_rw("gemm_math", &LoadOptions::gemm_math);

  nb::class_<Model>(m, "Model", "A GPT-2 model with its tokenizer (eagerlm::Model): a handle to immutable weights.")
      .def_static(
          "load",
          [](const std::string& directory, const std::string& device, const LoadOptions& options) {
            const Device d = parse_device(device);
            nb::gil_scoped_release release;
            return Model::load(directory, d, options);
          },
          nb::arg("directory"), nb::arg("device") = "cpu", nb::arg("options") = LoadOptions{})
      .def_static(
          "initialize",
          [](const std::string& preset_or_config, uint64_t seed, const std::string& device, const LoadOptions& options) {
            const Device d = parse_device(device);
            nb::gil_scoped_release release;
            return Model::initialize(preset_or_config, seed, d, options);
          },
          nb::arg("preset_or_config"), nb::arg("seed") = 0, nb::arg("device") = "cpu", nb::arg("options") = LoadOptions{})
      .def_static(
          "initialize",
          [](const ModelConfig& config, uint64_t seed, const std::string& device, const LoadOptions& options) {
            const Device d = parse_device(device);
            nb::gil_scoped_release release;
            return Model::initialize(config, seed, d, options);
          },
          nb::arg("config"), nb::arg("seed") = 0, nb::arg("device") = "cpu", nb::arg("options") = LoadOptions{})
      .def_static("from_parameters", &from_parameters, nb::arg("config"), nb::arg("tensors"), nb::arg("device") = "cpu")
      .def("info", &Model::info)
      .def(
          "tokenize",
          [](const Model& model, std::string_view text, bool parse_special) {
            nb::gil_scoped_release release;
            return model.tokenize(text, parse_special);
          },
          nb::arg("text"), nb::arg("parse_special") = false)
      .def(
          "detokenize",
          [](const Model& model, const std::vector<int32_t>& ids) {
            std::string bytes;
            {
              nb::gil_scoped_release release;
              bytes = model.detokenize(ids);
            }
            return nb::bytes(bytes.data(), bytes.size());
          },
          nb::arg("ids"))
      .def(
          "logits",
          [](const Model& model, const std::vector<int32_t>& ids) {
            std::vector<float> logits;
            size_t vocab = 0;
            {
              nb::gil_scoped_release release;
              vocab = model.info().vocab_size;
              logits = model.logits(ids);
            }
            return as_array(std::move(logits), vocab);
          },
          nb::arg("ids"))
      .def(
          "logits_batch",
          [](const Model& model, const std::vector<std::vector<int32_t>>& batch) {
            std::vector<std::vector<float>> logits;
            size_t vocab = 0;
            {
              nb::gil_scoped_release release;
              vocab = model.info().vocab_size;
              logits = model.logits_batch(batch);
            }
            nb::list out;
            for (auto& one : logits) out.append(as_array(std::move(one), vocab));
            return out;
          },
          nb::arg("batch"));
}

}  // namespace eagerlm::python
