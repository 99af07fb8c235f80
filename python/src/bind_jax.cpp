// eagerlm/jax_primitives.hpp over NumPy arrays, for eagerlm.jax (python/eagerlm/jax/): the
// caller allocates every output; arrays are C-contiguous, any shape, and each call releases the
// GIL while the kernels run. Outputs are never converted (a converted copy would be written and
// dropped): a wrong dtype or layout is a TypeError.
#include <nanobind/ndarray.h>

#include <string>

#include "python/src/bindings.h"

namespace eagerlm::python {

namespace {

template <typename T>
using In = nb::ndarray<const T, nb::c_contig, nb::device::cpu>;
template <typename T>
using Out = nb::ndarray<T, nb::c_contig, nb::device::cpu>;

// The element count all arrays of one call share.
template <typename First, typename... Rest>
int64_t common_size(const char* function, const First& first, const Rest&... rest) {
  const size_t n = first.size();
  if (((rest.size() != n) || ...))
    throw Error(ErrorCode::kInvalidArgument, std::string(function) + ": every array must have the same size");
  return int64_t(n);
}

}  // namespace

void bind_jax(nb::module_& m) {
  m.def(
      "jax_random_bits32",
      [](uint32_t k0, uint32_t k1, Out<uint32_t> out) {
        nb::gil_scoped_release release;
        jax::random_bits32(k0, k1, out.data(), int64_t(out.size()));
      },
      nb::arg("k0"), nb::arg("k1"), nb::arg("out").noconvert(), "jax.random.bits(key, out.shape, uint32) into out.");
  m.def(
      "jax_normal_f32",
      [](uint32_t k0, uint32_t k1, float scale, Out<float> out) {
        nb::gil_scoped_release release;
        jax::normal_f32(k0, k1, scale, out.data(), int64_t(out.size()));
      },
      nb::arg("k0"), nb::arg("k1"), nb::arg("scale"), nb::arg("out").noconvert(),
      "erfinv(u) * scale for the uniforms u of jax.random.normal(key, out.shape, float32), into out.");
  m.def(
      "jax_uniform_f32",
      [](uint32_t k0, uint32_t k1, float lo, float width, Out<float> out) {
        nb::gil_scoped_release release;
        jax::uniform_f32(k0, k1, lo, width, out.data(), int64_t(out.size()));
      },
      nb::arg("k0"), nb::arg("k1"), nb::arg("lo"), nb::arg("width"), nb::arg("out").noconvert(),
      "jax.random.uniform(key, out.shape, float32, lo, lo + width) as jax.jit computes it, into out.");
  m.def(
      "jax_threefry2x32",
      [](In<uint32_t> k0, In<uint32_t> k1, In<uint32_t> x0, In<uint32_t> x1, Out<uint32_t> y0, Out<uint32_t> y1) {
        const int64_t n = common_size("jax_threefry2x32", k0, k1, x0, x1, y0, y1);
        nb::gil_scoped_release release;
        jax::threefry2x32(k0.data(), k1.data(), x0.data(), x1.data(), y0.data(), y1.data(), n);
      },
      nb::arg("k0"), nb::arg("k1"), nb::arg("x0"), nb::arg("x1"), nb::arg("y0").noconvert(), nb::arg("y1").noconvert(),
      "The threefry2x32 primitive elementwise: (y0, y1) from keys (k0, k1) and counters (x0, x1).");
  m.def(
      "jax_erf_inv_f32",
      [](In<float> in, Out<float> out) {
        const int64_t n = common_size("jax_erf_inv_f32", in, out);
        nb::gil_scoped_release release;
        jax::erf_inv_f32(in.data(), out.data(), n);
      },
      nb::arg("x"), nb::arg("out").noconvert(), "lax.erf_inv on float32, as XLA:CPU computes it.");
  m.def(
      "jax_fma_f32",
      [](In<float> a, In<float> b, In<float> c, Out<float> out) {
        const int64_t n = common_size("jax_fma_f32", a, b, c, out);
        nb::gil_scoped_release release;
        jax::fma_f32(a.data(), b.data(), c.data(), out.data(), n);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::arg("out").noconvert(), "a * b + c rounded once, elementwise.");
}

}  // namespace eagerlm::python
