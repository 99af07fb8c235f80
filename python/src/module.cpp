// eagerlm._core: the extension module, one bind_*.cpp per part of the public C++ API.
#include "python/src/bindings.h"

NB_MODULE(_core, m) {
  m.doc() = "eagerlm's C++ API for Python (use the eagerlm package, which wraps this module)";
  eagerlm::python::bind_errors(m);
  eagerlm::python::bind_library(m);
  eagerlm::python::bind_parameters(m);
  eagerlm::python::bind_model(m);
  eagerlm::python::bind_generator(m);
  eagerlm::python::bind_engine(m);
  eagerlm::python::bind_jax(m);
  eagerlm::python::bind_xla_ffi(m);
}
