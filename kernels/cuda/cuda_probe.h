// The GPU's own limits, measured in the same run as a benchmark (kernels/cuda/probe.cu): memory
// bandwidth from a device-to-device copy, and the GEMM peak of each GemmMath through the very
// cuBLAS calls linear() makes. Plain C++ types only.
#pragma once

#include <string>

namespace eagerlm::cuda {

struct CudaContext;

struct DeviceProbe {
  std::string name;      // cudaDeviceProp::name
  double copy_gbps = 0;  // best of the timed copies, bytes read + bytes written per second / 1e9
  double copy_gbps_median = 0;
  double fp32_gflops = 0;  // median of the timed 8192³ products, per GemmMath
  double tf32_gflops = 0;
  double bf16_gflops = 0;
};

// Takes 2 GiB of device memory for about a second; leaves ctx's GEMM math as it was.
DeviceProbe probe_device(CudaContext& ctx);

// Its first part alone: name and copy_gbps(_median) set, the GEMM peaks 0 (2 GiB, a fraction of a
// second).
DeviceProbe probe_copy_bandwidth(CudaContext& ctx);

}  // namespace eagerlm::cuda
