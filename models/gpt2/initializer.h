// Fresh GPT-2 parameters, initialized the way Hugging Face's GPT2PreTrainedModel does it
// (normal(0, σ) weights, σ/sqrt(2·n_layer) for the residual projections, zero biases, unit
// layer-norm weights), drawn with JAX's random numbers so that anyone can reproduce them:
//
//   key(name) = jax.random.fold_in(jax.random.key(seed), fnv1a32(name))
//   value     = jax.random.normal(key(name), shape, jnp.float32) * stddev
//
// with fnv1a32 the 32-bit FNV-1a hash of the UTF-8 parameter name (as parameters.h spells it)
// and stddev the spec's value as a Python float (so converted to float32 before the multiply).
// Values depend on nothing else: not on order, thread count or device (CPU and CUDA agree bit
// for bit). The generator walks parameter_specs(); it knows nothing about GPT-2's sizes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/core/device.h"
#include "engine/core/dtype.h"
#include "models/gpt2/config.h"
#include "models/gpt2/parameters.h"

namespace eagerlm::gpt2 {

struct InitOptions {
  uint64_t seed = 0;
  Device device = Device::kCpu;
  DType dtype = DType::kF32;  // storage type: F32, F16 or BF16 (values rounded to nearest even)
  // Called from the calling thread as tensors fill (at most every 64 MiB), last with done == total.
  std::function<void(size_t done_bytes, size_t total_bytes)> progress;
};

// Bytes of one parameter stored as `dtype`; throws kInvalidArgument on overflow.
size_t parameter_bytes(const ParameterSpec& spec, DType dtype);
// Sum of parameter_bytes over the specs (what a checkpoint holds; the allocation adds at most
// 63 bytes of alignment per tensor).
size_t total_parameter_bytes(const std::vector<ParameterSpec>& specs, DType dtype);

// Validates the config and options, checks that the parameters fit in the device's available
// memory (before allocating anything: Error kOutOfMemory says how much is needed and free),
// then allocates every parameter in one block and fills it.
ParameterTensors initialize(const Config& config, const InitOptions& options);

// A digest of every parameter's bytes, tensors in spec order: the blocked XXH64 digest of
// engine/random/digest.h over each tensor's raw bytes (4 MiB blocks, blocks hashed in parallel).
// Equal digests mean equal parameters (same dtype, same bits); it runs at memory bandwidth.
uint64_t parameters_checksum(const ParameterTensors& parameters);

}  // namespace eagerlm::gpt2
