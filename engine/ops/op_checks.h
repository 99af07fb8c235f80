// Shape, dtype and device checks shared by the op wrappers. A failed check is an eagerlm bug
// (the model passed a wrong tensor), reported as kInternal with the op's name.
#pragma once

#include <string>

#include "engine/core/error.h"
#include "engine/core/tensor.h"
#include "engine/ops/exec_context.h"

namespace eagerlm::ops::detail {

[[noreturn]] inline void op_failed(const char* op, const std::string& what) {
  throw_error(ErrorCode::kInternal, std::string("op ") + op + ": " + what);
}

inline void expect(bool ok, const char* op, const std::string& what) {
  if (!ok) op_failed(op, what);
}

// The tensor is F32 on the context's device.
inline void expect_f32_on(const ExecContext& ctx, const Tensor& t, const char* op, const char* name) {
  expect(t.defined(), op, std::string(name) + " is undefined");
  expect(t.dtype() == DType::kF32, op, std::string(name) + " must be F32, is " + t.describe());
  expect(t.device() == ctx.device(), op,
         std::string(name) + " is on " + device_name(t.device()) + ", op runs on " + device_name(ctx.device()));
}

// A 2-D tensor whose rows may be strided but whose columns are contiguous; returns the row stride.
inline int64_t row_stride(const Tensor& t, const char* op, const char* name) {
  expect(t.rank() == 2, op, std::string(name) + " must be 2-D, is " + t.describe());
  expect(t.stride(1) == 1 || t.size(1) == 1, op, std::string(name) + " columns must be contiguous");
  return t.size(0) > 1 ? t.stride(0) : t.size(1);
}

}  // namespace eagerlm::ops::detail
