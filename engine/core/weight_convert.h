// Converting a weight matrix from the type it was stored in to the type a model computes with,
// at load (models/gpt2/model.cpp) and by `eagerlm quantize`: f32/bf16/f16 by widening and
// rounding to nearest even, int8 by symmetric per-block quantization (quantize_int8), and any
// type back to f32 by widening (an int8 checkpoint may run as f32: float(q)·s). On the host, on
// all cores (the CPU kernels are multi-threaded), in chunks of rows so that the float32 scratch
// stays under 64 MiB whatever the matrix; then copied to `device` if that is not the host.
#pragma once

#include <cstdint>
#include <functional>

#include "engine/core/weight_tensor.h"

namespace eagerlm {

// Called after each chunk with the source elements converted so far (of this matrix).
using ConvertProgress = std::function<void(int64_t done_elements)>;

// `source` in type `type` on `device`. A source already of that type and on that device is
// returned as it is (sharing its tensors: no copy). Throws Error(kInvalidArgument) when the
// matrix cannot be int8 (its inputs are not a multiple of kInt8Block), naming `what`.
WeightTensor convert_weight(const WeightTensor& source, WeightType type, Device device, const char* what,
                            const ConvertProgress& progress = {});

// The same matrix held in `layout` (a rearranged copy on the host; `w` itself when it is held so
// already): f32, bf16, f16 and int8 (its scales with it) on the CPU between input- and
// output-major; f32 and f16, bf16 with even inputs, and int8 with whole blocks of inputs, to and
// from panels (panels_fit). Anything else is Error(kInternal).
WeightTensor with_layout(const WeightTensor& w, WeightLayout layout);
// Whether a matrix of `type` with this many inputs can be held in panels.
bool panels_fit(WeightType type, int64_t inputs);

}  // namespace eagerlm
