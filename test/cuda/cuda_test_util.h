// Helpers for the CUDA-versus-CPU kernel tests (test_cuda_ops, which calls kernels/cuda directly,
// not through the CUDA module): device buffers, the CUDA context, reproducible random inputs, and
// the tolerance check that reports the worst element.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <vector>

#include "kernels/cuda/cuda_memory.h"
#include "kernels/cuda/cuda_ops.h"
#include "test/support/random.h"
#include "test/support/tolerance.h"

namespace eagerlm::cuda_test {

using test::kFloatEps;
constexpr double kU = kFloatEps;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
using test::random_floats;
using test::test_rng;

// A device copy of a host vector (at least one element, so empty inputs still get a pointer).
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(const std::vector<T>& host)
      : n_(host.size()), p_(static_cast<T*>(cuda::malloc_bytes((n_ > 0 ? n_ : 1) * sizeof(T)))) {
    if (n_ > 0) cuda::copy_bytes(p_, true, host.data(), false, n_ * sizeof(T));
  }
  ~DeviceBuffer() { cuda::free_bytes(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return p_; }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    if (n_ > 0) cuda::copy_bytes(host.data(), false, p_, true, n_ * sizeof(T));
    return host;
  }

 private:
  size_t n_;
  T* p_;
};

struct ContextDeleter {
  void operator()(cuda::CudaContext* c) const noexcept { cuda::destroy_context(c); }
};
using ContextPtr = std::unique_ptr<cuda::CudaContext, ContextDeleter>;
inline ContextPtr make_context() { return ContextPtr(cuda::create_context()); }

// A CUDA result against the CPU's (a non-finite CPU value must be matched bit for bit), and bit
// identity; see test/support/tolerance.h.
inline void check_close(const std::vector<float>& got, const std::vector<float>& want,
                        const std::vector<double>& bound) {
  test::check_within_float(got, want, bound);
}
inline void check_identical(const std::vector<float>& got, const std::vector<float>& want) {
  test::check_identical(got, want);
}

}  // namespace eagerlm::cuda_test
