// initialize(): size check, one allocation, then each parameter filled in place by the CPU fill
// loops (engine/random/fill.h) or their CUDA twins, in pieces so progress can be reported.
#include "models/gpt2/initializer.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "engine/core/error.h"
#include "engine/core/tensor.h"
#include "engine/random/digest.h"
#include "engine/random/fill.h"
#include "engine/random/fill_cuda.h"
#include "engine/random/threefry.h"

namespace eagerlm::gpt2 {

namespace {

constexpr size_t kAlignment = 64;                      // each tensor starts on a cache line
constexpr int64_t kProgressBytes = int64_t{64} << 20;  // report at least every 64 MiB

size_t align_up(size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

size_t checked_add(size_t a, size_t b) {
  size_t sum;
  if (__builtin_add_overflow(a, b, &sum))
    throw_error(ErrorCode::kInvalidArgument, "model size overflows size_t");
  return sum;
}

std::string gib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / double(size_t{1} << 30));
  return buf;
}

// MemAvailable from /proc/meminfo: what can be allocated without swapping. nullopt if unknown.
std::optional<size_t> host_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    unsigned long long kib = 0;
    if (fields >> kib) return size_t(kib) * 1024;
  }
  return std::nullopt;
}

void check_fits(size_t bytes, Device device) {
  if (device == Device::kCuda) {
    const size_t free = size_t(rng::cuda::free_memory_bytes());
    if (bytes > free)
      throw_error(ErrorCode::kOutOfMemory, "the parameters need " + gib(bytes) + " but the CUDA device has only " +
                                               gib(free) + " free");
    return;
  }
  if (const auto available = host_available_bytes(); available && bytes > *available)
    throw_error(ErrorCode::kOutOfMemory, "the parameters need " + gib(bytes) + " but only " + gib(*available) +
                                             " of host memory is available (MemAvailable in /proc/meminfo)");
}

// Asks Linux to back a large host block with transparent huge pages: first-touching gigabytes
// in 4 KiB pages costs more than generating the numbers. Only advice; failure changes nothing.
void advise_huge_pages(void* data, size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kPage = 4096;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kPage - 1) & ~(kPage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kPage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

void fill_normal_piece(Device device, rng::Key key, float stddev, DType dtype, void* out, int64_t n,
                       uint64_t first_index) {
  if (device == Device::kCuda)
    rng::cuda::fill_normal(key, stddev, dtype, out, n, first_index);
  else
    rng::fill_normal(key, stddev, dtype, out, n, first_index);
}

void fill_constant(Device device, float value, DType dtype, void* out, int64_t n) {
  if (device == Device::kCuda)
    rng::cuda::fill_constant(value, dtype, out, n);
  else
    rng::fill_constant(value, dtype, out, n);
}

}  // namespace

size_t parameter_bytes(const ParameterSpec& spec, DType dtype) {
  size_t bytes = dtype_size(dtype);
  for (int i = 0; i < spec.shape.rank(); ++i)
    if (spec.shape[i] < 0 || __builtin_mul_overflow(bytes, size_t(spec.shape[i]), &bytes))
      throw_error(ErrorCode::kInvalidArgument, "parameter " + spec.name + " " + spec.shape.to_string() +
                                                   " is too large to address");
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
    throw_error(ErrorCode::kInvalidArgument, std::string("parameters can be stored as F32, F16 or BF16, not ") +
                                                 dtype_name(options.dtype));
  if (options.device == Device::kCuda && !cuda_available())
    throw_error(ErrorCode::kUnsupported,
                std::string("CUDA initialization requested but ") + cuda_unavailable_reason());

  ParameterTensors result;
  result.specs = parameter_specs(config);
  const DType dtype = options.dtype;
  const size_t total = total_parameter_bytes(result.specs, dtype);
  size_t allocation = 0;
  for (const auto& spec : result.specs) allocation = checked_add(allocation, align_up(parameter_bytes(spec, dtype)));
  check_fits(allocation, options.device);

  auto storage = Storage::allocate(allocation, options.device);
  if (options.device == Device::kCpu) advise_huge_pages(storage->data(), allocation);

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
    auto* base = static_cast<unsigned char*>(tensor.raw());
    if (spec.init == InitKind::kNormal || spec.init == InitKind::kNormalResidual) {
      const rng::Key key = rng::parameter_key(options.seed, spec.name);
      const float stddev = float(spec.stddev);  // as JAX converts a Python float
      for (int64_t first = 0; first < n; first += piece_elements) {
        const int64_t count = std::min(piece_elements, n - first);
        fill_normal_piece(options.device, key, stddev, dtype, base + size_t(first) * dtype_size(dtype), count,
                          uint64_t(first));
        done += size_t(count) * dtype_size(dtype);
        if (options.progress) options.progress(done, total);
      }
    } else {
      fill_constant(options.device, spec.init == InitKind::kOnes ? 1.0f : 0.0f, dtype, base, n);
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
