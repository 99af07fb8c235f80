// eagerlm::Error as Python exceptions. The classes are Python's own (eagerlm/_errors.py, so that
// they can also derive from ValueError, OSError or MemoryError); the package hands them to
// set_error_classes at import, and every Error thrown by the library is raised as the class of
// its code, with its message.
#include <nanobind/stl/map.h>

#include <array>
#include <exception>
#include <map>

#include "python/src/bindings.h"

namespace eagerlm::python {

namespace {

constexpr size_t kCodes = size_t(ErrorCode::kBusy) + 1;
std::array<nb::handle, kCodes> g_classes;  // strong references, held until the process ends

void set_error_classes(const std::map<ErrorCode, nb::handle>& classes) {
  for (const auto& [code, cls] : classes) {
    if (!PyType_Check(cls.ptr()) ||
        !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()), reinterpret_cast<PyTypeObject*>(PyExc_Exception)))
      throw nb::type_error("set_error_classes: expected exception classes");
    const size_t i = size_t(code);
    if (i >= kCodes) throw nb::value_error("set_error_classes: unknown code");
    if (g_classes[i]) g_classes[i].dec_ref();
    g_classes[i] = cls.inc_ref();
  }
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const Error& e) {
    const size_t i = size_t(e.code());
    PyObject* cls = i < kCodes && g_classes[i] ? g_classes[i].ptr() : PyExc_RuntimeError;
    PyErr_SetString(cls, e.what());
  }
}

}  // namespace

void bind_errors(nb::module_& m) {
  nb::enum_<ErrorCode>(m, "ErrorCode", "What kind of failure an eagerlm.Error is (eagerlm::ErrorCode).")
      .value("INVALID_ARGUMENT", ErrorCode::kInvalidArgument, "a bad option or value from the caller")
      .value("INVALID_FILE", ErrorCode::kInvalidFile, "a model, config or tokenizer file that is malformed")
      .value("IO", ErrorCode::kIo, "a file that cannot be opened, read or written")
      .value("UNSUPPORTED", ErrorCode::kUnsupported, "a valid request this build or machine cannot serve")
      .value("OUT_OF_MEMORY", ErrorCode::kOutOfMemory, "an allocation that failed or would not fit")
      .value("INTERNAL", ErrorCode::kInternal, "a broken invariant: a bug in eagerlm")
      .value("BUSY", ErrorCode::kBusy, "no room now; the same call may succeed later");
  m.def("set_error_classes", &set_error_classes, nb::arg("classes"),
        "Registers the Python exception class raised for each ErrorCode.");
  m.def(
      "error_code_name", [](ErrorCode code) { return error_code_name(code); }, nb::arg("code"),
      "The engine's name of a code: 'invalid argument', 'I/O error', ...");
  nb::register_exception_translator(&translate);
}

}  // namespace eagerlm::python
