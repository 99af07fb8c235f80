// initialize(): size check, one allocation, then each parameter filled in place by the device's
// fill op (engine/ops), in pieces so progress can be reported.
#include "models/gpt2/initializer.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "engine/core/error.h"
#include "engine/core/tensor.h"
#include "engine/ops/exec_context.h"
#include "engine/ops/ops.h"
#include "engine/random/digest.h"
#include "kernels/common/random/threefry.h"

namespace eagerlm::gpt2 {

namespace {

constexpr size_t kAlignment = 64;                      // each tensor starts on a cache line
constexpr int64_t kProgressBytes = int64_t{64} << 20;  // report at least every 64 MiB

size_t align_up(size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

size_t checked_add(size_t a, size_t b) {
  size_t sum;
  if (__builtin_add_overflow(a, b, &sum)) throw_error(ErrorCode::kInvalidArgument, "model size overflows size_t");
  return sum;
}

std::string gib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / double(size_t{1} << 30));
  return buf;
}

// Refuses, before allocating, parameters that cannot fit in what the device has available.
void check_fits(size_t bytes, Device device) {
  const size_t available = device_available_bytes(device);
  if (available > 0 && bytes > available)
    throw_error(ErrorCode::kOutOfMemory, "the parameters need " + gib(bytes) + " but only " + gib(available) + " of " +
                                             device_name(device) + " memory is available");
}

}  // namespace

size_t parameter_bytes(const ParameterSpec& spec, DType dtype) {
  size_t bytes = dtype_size(dtype);
  for (int i = 0; i < spec.shape.rank(); ++i)
    if (spec.shape[i] < 0 || __builtin_mul_overflow(bytes, size_t(spec.shape[i]), &bytes))
      throw_error(ErrorCode::kInvalidArgument,
                  "parameter " + spec.name + " " + spec.shape.to_string() + " is too large to address");
  return bytes;
}

size_t total_parameter_bytes(const std::vector<ParameterSpec>& specs, DType dtype) {
  size_t total = 0;
  for (const auto& spec : specs) total = checked_add(total, parameter_bytes(spec, dtype));
  return total;
}

ParameterTensors initialize(const Config& config, const InitOptions& options) {
  config.validate("model config");
  if (options.dtype != DType::kF32 && options.dtype != DType::kF16 && options.dtype != DType::kBF16)
    throw_error(ErrorCode::kInvalidArgument,
                std::string("parameters can be stored as F32, F16 or BF16, not ") + dtype_name(options.dtype));
  const ExecContext ctx(options.device);  // throws kUnsupported for an unusable device

  ParameterTensors result;
  result.specs = parameter_specs(config);
  const DType dtype = options.dtype;
  const size_t total = total_parameter_bytes(result.specs, dtype);
  size_t allocation = 0;
  for (const auto& spec : result.specs) allocation = checked_add(allocation, align_up(parameter_bytes(spec, dtype)));
  check_fits(allocation, options.device);

  auto storage = Storage::allocate(allocation, options.device);

  result.tensors.reserve(result.specs.size());
  size_t offset = 0;
  for (const auto& spec : result.specs) {
    result.tensors.push_back(Tensor::over(storage, offset, spec.shape, dtype));
    offset += align_up(parameter_bytes(spec, dtype));
  }

  size_t done = 0;
  if (options.progress) options.progress(0, total);
  const int64_t piece_elements = kProgressBytes / int64_t(dtype_size(dtype));
  for (size_t i = 0; i < result.specs.size(); ++i) {
    const ParameterSpec& spec = result.specs[i];
    const Tensor& tensor = result.tensors[i];
    const int64_t n = tensor.numel();
    Tensor flat = tensor.reshape({n});
    if (spec.init == InitKind::kNormal || spec.init == InitKind::kNormalResidual) {
      const rng::Key key = rng::parameter_key(options.seed, spec.name);
      const float stddev = float(spec.stddev);  // as JAX converts a Python float
      for (int64_t first = 0; first < n; first += piece_elements) {
        const int64_t count = std::min(piece_elements, n - first);
        Tensor piece = flat.slice(0, first, count);
        ops::fill_normal(ctx, piece, key, stddev, uint64_t(first));
        done += size_t(count) * dtype_size(dtype);
        if (options.progress) options.progress(done, total);
      }
    } else {
      ops::fill_constant(ctx, flat, spec.init == InitKind::kOnes ? 1.0f : 0.0f);
      done += tensor.nbytes();
      if (options.progress && n > 0) options.progress(done, total);
    }
  }
  return result;
}

uint64_t parameters_checksum(const ParameterTensors& parameters) {
  rng::BlockedDigest digest;
  for (const Tensor& tensor : parameters.tensors) {
    if (!tensor.is_contiguous())
      throw_error(ErrorCode::kInternal, "parameters_checksum: non-contiguous tensor " + tensor.describe());
    if (tensor.device() == Device::kCpu) {
      digest.add(tensor.raw(), tensor.nbytes());
    } else {
      const Tensor host = tensor.to(Device::kCpu);  // one tensor at a time
      digest.add(host.raw(), host.nbytes());
    }
  }
  return digest.finish();
}

}  // namespace eagerlm::gpt2
