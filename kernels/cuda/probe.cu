// cuda_probe.h. Timed with CUDA events on the context's stream after a warm-up, on random data
// (zeros can run faster than real data). The copy counts bytes read plus bytes written: HBM's
// bandwidth is shared between the two directions, so that sum is the rate at which a pure read
// stream (decode reading its weights) can go, the figure the CPU's read probe gives.
#include <algorithm>
#include <vector>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/cuda_probe.h"

namespace eagerlm::cuda {

namespace {

struct DeviceMemory {
  explicit DeviceMemory(size_t bytes) { EAGERLM_CUDA_CHECK(cudaMalloc(&p, bytes)); }
  ~DeviceMemory() { cudaFree(p); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  float* f32() const { return static_cast<float*>(p); }
  void* p = nullptr;
};

struct Events {
  Events() {
    EAGERLM_CUDA_CHECK(cudaEventCreate(&start));
    EAGERLM_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  cudaEvent_t start = nullptr, stop = nullptr;
};

// Milliseconds of each of `reps` runs of body() on ctx's stream, after one untimed run.
template <typename Body>
std::vector<double> time_runs(CudaContext& ctx, int reps, Body&& body) {
  Events ev;
  body();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    EAGERLM_CUDA_CHECK(cudaEventRecord(ev.start, ctx.stream));
    body();
    EAGERLM_CUDA_CHECK(cudaEventRecord(ev.stop, ctx.stream));
    EAGERLM_CUDA_CHECK(cudaEventSynchronize(ev.stop));
    float t = 0;
    EAGERLM_CUDA_CHECK(cudaEventElapsedTime(&t, ev.start, ev.stop));
    ms.push_back(double(t));
  }
  return ms;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

DeviceProbe probe_copy_bandwidth(CudaContext& ctx) {
  DeviceProbe probe;
  cudaDeviceProp prop{};
  EAGERLM_CUDA_CHECK(cudaGetDeviceProperties(&prop, ctx.device));
  probe.name = prop.name;

  {  // 1 GiB copied, far beyond any L2
    constexpr size_t kBytes = size_t(1) << 30;
    DeviceMemory src(kBytes), dst(kBytes);
    fill_normal(ctx, rng::Key{1, 2}, 1.0f, DType::kF32, src.p, int64_t(kBytes / sizeof(float)), 0);
    const auto ms = time_runs(ctx, 10, [&] {
      EAGERLM_CUDA_CHECK(cudaMemcpyAsync(dst.p, src.p, kBytes, cudaMemcpyDeviceToDevice, ctx.stream));
    });
    probe.copy_gbps = 2.0 * double(kBytes) / (*std::min_element(ms.begin(), ms.end()) * 1e6);
    probe.copy_gbps_median = 2.0 * double(kBytes) / (median(ms) * 1e6);
  }
  return probe;
}

DeviceProbe probe_device(CudaContext& ctx) {
  DeviceProbe probe = probe_copy_bandwidth(ctx);
  {  // y[n, n] = x[n, n] · w[n, n] through linear(), as the model's GEMMs run
    constexpr int64_t n = 8192;
    const size_t bytes = size_t(n * n) * sizeof(float);
    DeviceMemory x(bytes), w(bytes), y(bytes);
    fill_normal(ctx, rng::Key{3, 4}, 1.0f, DType::kF32, x.p, n * n, 0);
    fill_normal(ctx, rng::Key{5, 6}, 1.0f, DType::kF32, w.p, n * n, 0);
    const GemmMath was = ctx.gemm_math;
    const double flops = 2.0 * double(n) * double(n) * double(n);
    double* out[] = {&probe.fp32_gflops, &probe.tf32_gflops, &probe.bf16_gflops};
    const GemmMath maths[] = {GemmMath::kFp32, GemmMath::kTf32, GemmMath::kBf16};
    try {
      for (int i = 0; i < 3; ++i) {
        set_gemm_math(ctx, maths[i]);
        const auto ms = time_runs(ctx, 5, [&] { linear(ctx, x.f32(), n, w.f32(), nullptr, y.f32(), n, n, n, n); });
        *out[i] = flops / (median(ms) * 1e6);
      }
    } catch (...) {
      set_gemm_math(ctx, was);
      throw;
    }
    set_gemm_math(ctx, was);
  }
  return probe;
}

}  // namespace eagerlm::cuda
