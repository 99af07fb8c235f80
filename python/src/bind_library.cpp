// Process-wide facts and settings: the library's version, CPU threads, whether CUDA is there;
// and the small helpers the other parts share.
#include <nanobind/stl/string.h>

#include "python/src/bindings.h"

namespace eagerlm::python {

Device parse_device(std::string_view name) {
  if (name == "cpu") return Device::kCpu;
  if (name == "cuda") return Device::kCuda;
  throw Error(ErrorCode::kInvalidArgument, "device: expected \"cpu\" or \"cuda\", got \"" + std::string(name) + "\"");
}

nb::str utf8_text(std::string_view text) {
  PyObject* s = PyUnicode_DecodeUTF8(text.data(), Py_ssize_t(text.size()), "replace");
  if (!s) throw nb::python_error();
  return nb::steal<nb::str>(s);
}

void bind_library(nb::module_& m) {
  m.def(
      "version", [] { return std::string(version()); }, "The loaded library's version, MAJOR.MINOR.PATCH.");
  m.def("cuda_available", &cuda_available, "Whether this build has the CUDA backend and a CUDA device is present.");
  m.def("set_cpu_threads", &set_cpu_threads, nb::arg("n"),
        "CPU threads for every later call from any thread; 0 restores the default (OMP_NUM_THREADS, else "
        "every core available to the process).");
  m.def("cpu_threads", &cpu_threads, "The set_cpu_threads setting (0: the default).");
}

}  // namespace eagerlm::python
