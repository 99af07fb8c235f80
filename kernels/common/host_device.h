// EAGERLM_HOST_DEVICE marks functions that compile for both the CPU and a CUDA device, so code
// the two backends share (engine/random's threefry and normal, kernels/sampling_*.h) is one
// source for both and cannot drift apart.
#pragma once

#if defined(__CUDACC__)
#define EAGERLM_HOST_DEVICE __host__ __device__
#else
#define EAGERLM_HOST_DEVICE
#endif
