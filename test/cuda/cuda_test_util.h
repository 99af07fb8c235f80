// Helpers for the CUDA-versus-CPU kernel tests: device buffers, the CUDA context, reproducible
// random inputs, and the tolerance check that reports the worst element.
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

#include "engine/core/device.h"
#include "kernels/cuda/cuda_ops.h"

namespace eagerlm::cuda_test {

// Unit roundoff of float32: |fl(a ∘ b) - a ∘ b| <= kU·|a ∘ b|.
constexpr double kU = 0x1p-24;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// A device copy of a host vector (at least one element, so empty inputs still get a pointer).
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(const std::vector<T>& host)
      : n_(host.size()),
        p_(static_cast<T*>(device_alloc(Device::kCuda, (n_ > 0 ? n_ : 1) * sizeof(T)))) {
    if (n_ > 0) device_copy(p_, Device::kCuda, host.data(), Device::kCpu, n_ * sizeof(T));
  }
  ~DeviceBuffer() { device_free(Device::kCuda, p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return p_; }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    if (n_ > 0) device_copy(host.data(), Device::kCpu, p_, Device::kCuda, n_ * sizeof(T));
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

// Seeded from Catch's --rng-seed (printed on failure) and a per-test salt.
inline std::mt19937 test_rng(uint32_t salt) {
  std::seed_seq seq{Catch::rngSeed(), salt};
  return std::mt19937(seq);
}

inline std::vector<float> random_floats(std::mt19937& rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Requires |got[i] - want[i]| <= bound[i] everywhere (a non-finite got fails unless want is the
// identical non-finite value); on failure names the worst element and the number that failed.
inline void check_close(const std::vector<float>& got, const std::vector<float>& want,
                        const std::vector<double>& bound) {
  REQUIRE(got.size() == want.size());
  REQUIRE(bound.size() == want.size());
  size_t n_bad = 0, worst = 0;
  double worst_ratio = -1.0;
  for (size_t i = 0; i < got.size(); ++i) {
    double ratio;
    if (std::isnan(want[i]) || std::isinf(want[i]))
      ratio = std::memcmp(&got[i], &want[i], sizeof(float)) == 0
                  ? 0.0
                  : std::numeric_limits<double>::infinity();
    else if (!std::isfinite(got[i]))
      ratio = std::numeric_limits<double>::infinity();
    else {
      const double err = std::abs(double(got[i]) - double(want[i]));
      ratio = err == 0.0 ? 0.0 : err / bound[i];  // a zero bound demands equality
    }
    if (!(ratio <= 1.0)) ++n_bad;
    if (!(ratio <= worst_ratio)) {
      worst_ratio = ratio;
      worst = i;
    }
  }
  if (n_bad != 0) {
    std::ostringstream msg;
    msg.precision(9);
    msg << n_bad << " of " << got.size() << " elements out of tolerance; worst at " << worst
        << ": cuda " << got[worst] << ", cpu " << want[worst] << ", bound " << bound[worst];
    FAIL(msg.str());
  }
  SUCCEED();
}

// Requires got and want to be identical bit for bit (NaNs included).
inline void check_identical(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  size_t n_bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) {
      if (n_bad == 0) first = i;
      ++n_bad;
    }
  }
  if (n_bad != 0) {
    std::ostringstream msg;
    msg.precision(9);
    msg << n_bad << " of " << got.size() << " elements differ; first at " << first << ": cuda "
        << got[first] << ", cpu " << want[first];
    FAIL(msg.str());
  }
  SUCCEED();
}

}  // namespace eagerlm::cuda_test
