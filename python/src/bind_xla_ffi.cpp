// eagerlm's padded attention as an XLA FFI handler (XLA's typed FFI, the headers jaxlib ships:
// jax.ffi.include_dir()), for eagerlm.jax.padded_attention: XLA hands the handler its buffers on
// the host and the handler runs eagerlm::padded_attention on them, in the jitted program, with no
// copy and no callback into Python. Registered from Python with jax.ffi.register_ffi_target.
//
// Built when CMake finds those headers (python/CMakeLists.txt); without them xla_ffi_targets()
// is empty and eagerlm.jax says how to build the op.
#include <string>

#include "python/src/bindings.h"

#if EAGERLM_HAS_XLA_FFI
#include <cstdint>
#include <exception>

#include <xla/ffi/api/ffi.h>

namespace eagerlm::python {

namespace {

namespace ffi = xla::ffi;

std::string dims_text(ffi::Span<const int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// Shapes are checked in Python when the call is traced; these checks keep a call built some
// other way (another wrapper, a hand-written custom call) from reading out of bounds.
ffi::Error padded_attention_handler(ffi::Buffer<ffi::F32> q, ffi::AnyBuffer k_cache, ffi::AnyBuffer v_cache,
                                    ffi::Buffer<ffi::S32> lengths, ffi::ResultBuffer<ffi::F32> out, float scale) {
  const auto qd = q.dimensions(), kd = k_cache.dimensions(), vd = v_cache.dimensions(), ld = lengths.dimensions();
  if (qd.size() != 4 || kd.size() != 4 || ld.size() != 1)
    return ffi::Error::InvalidArgument("eagerlm padded_attention: q must be [batch, new_tokens, heads, head_dim], "
                                       "the caches [batch, heads, max_len, head_dim] and lengths [batch]; got q " +
                                       dims_text(qd) + ", k_cache " + dims_text(kd) + ", lengths " + dims_text(ld));
  const bool same_cache = vd.size() == 4 && kd[0] == vd[0] && kd[1] == vd[1] && kd[2] == vd[2] && kd[3] == vd[3] &&
                          k_cache.element_type() == v_cache.element_type();
  const auto od = out->dimensions();
  const bool out_like_q = od.size() == 4 && od[0] == qd[0] && od[1] == qd[1] && od[2] == qd[2] && od[3] == qd[3];
  if (!same_cache || !out_like_q || kd[0] != qd[0] || kd[1] != qd[2] || kd[3] != qd[3] || ld[0] != qd[0])
    return ffi::Error::InvalidArgument("eagerlm padded_attention: shapes do not fit: q " + dims_text(qd) +
                                       ", k_cache " + dims_text(kd) + ", v_cache " + dims_text(vd) + ", lengths " +
                                       dims_text(ld));
  const char* type = k_cache.element_type() == ffi::DataType::F32    ? "f32"
                     : k_cache.element_type() == ffi::DataType::BF16 ? "bf16"
                     : k_cache.element_type() == ffi::DataType::F16  ? "f16"
                                                                     : nullptr;
  if (!type) return ffi::Error::InvalidArgument("eagerlm padded_attention: the caches must be float32, bfloat16 or float16");
  const PaddedAttentionShape shape{qd[0], qd[1], qd[2], kd[2], qd[3]};
  try {
    padded_attention(q.typed_data(), k_cache.untyped_data(), v_cache.untyped_data(), type, lengths.typed_data(), shape,
                     scale, out->typed_data());
  } catch (const std::exception& e) {
    return ffi::Error::InvalidArgument(std::string("eagerlm ") + e.what());
  }
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(eagerlm_xla_padded_attention, padded_attention_handler,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("scale"));

void bind_xla_ffi(nb::module_& m) {
  m.def(
      "xla_ffi_targets",
      [] {
        nb::dict targets;
        targets["eagerlm_padded_attention"] = nb::capsule(reinterpret_cast<void*>(&eagerlm_xla_padded_attention));
        return targets;
      },
      "The XLA FFI handlers this module holds (target name -> capsule), for jax.ffi.register_ffi_target.");
}

}  // namespace eagerlm::python

#else

namespace eagerlm::python {

void bind_xla_ffi(nb::module_& m) {
  m.def(
      "xla_ffi_targets", [] { return nb::dict(); },
      "The XLA FFI handlers this module holds: none (built without jaxlib's XLA FFI headers).");
}

}  // namespace eagerlm::python

#endif
