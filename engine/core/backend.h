// What a device must provide to run eagerlm: memory, and a queue of work on which the ops of
// engine/ops/ops.h run. The CPU backend (cpu_backend.cpp) is built in; the CUDA backend is a
// module, libeagerlm-cuda.so, loaded the first time Device::kCuda is asked for
// (backend_registry.cpp), so that a process that never asks for CUDA never loads a CUDA library.
//
// Pointers here are raw device pointers and the argument conventions are the kernels' (see
// kernels/cpu/cpu_ops.h): the engine's ops have validated every shape before they call a queue.
// Adding a backend means implementing these two interfaces; models and generation need no change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "eagerlm/common.hpp"  // Device
#include "engine/core/error.h"
#include "kernels/common/dtype.h"
#include "kernels/common/gemm_math.h"
#include "kernels/common/kv_layout.h"
#include "kernels/common/random/threefry.h"
#include "kernels/common/sampling_types.h"
#include "kernels/common/weights.h"

namespace eagerlm {

// Host memory from which a step's inputs reach device memory in one copy, queued in order with
// the ops (on CUDA: page-locked, copied asynchronously).
class Staging {
 public:
  virtual ~Staging() = default;
  virtual size_t capacity() const = 0;
  // The host memory to fill, once the previous upload from it has been read.
  virtual void* writable() = 0;
  // Queues a copy of the first `bytes` of writable() to `device_dst`; later ops see the data.
  virtual void upload(void* device_dst, size_t bytes) = 0;
};

// Work recorded once and replayed with one launch (a CUDA graph of a decode step). Everything it
// touches is baked in by address, so its buffers must stay where they were when it was recorded.
class StepGraph {
 public:
  virtual ~StepGraph() = default;
  // True when the queue changed under the graph (scratch reallocated, GEMM math switched) and it
  // must be recorded again.
  virtual bool stale() const = 0;
  virtual void launch() = 0;
};

// What a queue holds that later steps depend on, for checks and reports.
struct QueueStats {
  const void* scratch = nullptr;  // the device scratch kernels use (CUDA split attention), or null
  size_t scratch_bytes = 0;
};

// An ordered stream of work on one device. Ops run, or are queued, in call order; synchronize()
// waits for all of them. One queue is used by one thread at a time.
class Queue {
 public:
  virtual ~Queue() = default;
  virtual void synchronize() = 0;
  virtual QueueStats stats() const = 0;
  // The math of the products with weights of type `weights` from now on. Throws
  // Error(kUnsupported) for math the backend lacks for them (the CPU has kFp32, and kBf16 for bf16
  // weights where its kernels have a bf16 GEMM; not kTf32).
  virtual void set_gemm_math(GemmMath math, WeightType weights) = 0;

  // ---- Ops: the contracts of kernels/cpu/cpu_ops.h, on this device's memory.
  virtual void linear(const float* x, int64_t ldx, const float* w, const float* bias, float* y, int64_t ldy, int64_t m,
                      int64_t k, int64_t n) = 0;
  virtual void linear_transposed(const float* x, int64_t ldx, const float* w, float* y, int64_t ldy, int64_t m,
                                 int64_t k, int64_t n) = 0;
  // log softmax(h·wᵀ)[targets[r]] per row, without the [rows, vocab] logits (cpu_ops.h).
  virtual void target_logprobs(const float* h, int64_t ldh, const float* w, const int32_t* targets, float* out,
                               int64_t rows, int64_t d, int64_t vocab) = 0;
  // The products with typed weights (kernels/common/weights.h: W input-major for linear_typed,
  // output-major for linear_transposed_typed), with the queue's GEMM math.
  virtual void linear_typed(const float* x, int64_t ldx, const Weights& w, const float* bias, float* y, int64_t ldy,
                            int64_t m, int64_t k, int64_t n) = 0;
  virtual void linear_transposed_typed(const float* x, int64_t ldx, const Weights& w, float* y, int64_t ldy, int64_t m,
                                       int64_t k, int64_t n) = 0;
  // The product with W (any type) held in panels (weights.h), which only a backend whose
  // linear_layout chose them holds, with the queue's GEMM math. Others throw Error(kUnsupported).
  virtual void linear_panels(const float* /*x*/, int64_t /*ldx*/, const Weights& /*w*/, const float* /*bias*/,
                             float* /*y*/, int64_t /*ldy*/, int64_t /*m*/, int64_t /*k*/, int64_t /*n*/) {
    throw_error(ErrorCode::kUnsupported, "this device holds no weights in panels");
  }
  virtual void layer_norm(const float* x, const float* gamma, const float* beta, float* y, int64_t rows, int64_t cols,
                          float eps) = 0;
  virtual void gelu(const float* x, float* y, int64_t n) = 0;
  virtual void add(const float* a, const float* b, float* y, int64_t n) = 0;
  virtual void embedding(const int32_t* ids, const int32_t* positions, int64_t n_tokens, const Weights& wte,
                         const float* wpe, int64_t d_model, float* y) = 0;
  virtual void softmax(float* x, int64_t rows, int64_t cols, const int32_t* valid) = 0;
  // Caches of layout.dtype (F32, BF16 or F16).
  virtual void kv_append(const float* qkv, const StepBatch& batch, const KvLayout& layout, void* k_cache,
                         void* v_cache) = 0;
  virtual void kv_copy(const KvLayout& layout, void* k_cache, void* v_cache, int64_t src_slot, int64_t dst_slot,
                       int64_t n_positions) = 0;
  virtual void attention(const float* qkv, int64_t ld_qkv, const StepBatch& batch, const KvLayout& layout,
                         const void* k_cache, const void* v_cache, float scale, float* out, int64_t ld_out) = 0;
  // The initializer's fills (dtype F32, F16 or BF16): synchronous, bit-identical on every backend.
  virtual void fill_normal(rng::Key key, float stddev, DType dtype, void* out, int64_t n, uint64_t first_index) = 0;
  virtual void fill_constant(float value, DType dtype, void* out, int64_t n) = 0;

  // ---- Planning: reserves now whatever later steps of up to max_rows rows over max_len cached
  // positions need, so that no step allocates (and a recorded StepGraph stays valid).
  virtual void reserve_step(int64_t max_rows, int64_t n_head, int64_t d_head, int64_t max_len) = 0;
  // The same for target_logprobs over up to max_rows rows (for a forward pass that scores).
  virtual void reserve_target_logprobs(int64_t max_rows) = 0;
  virtual std::unique_ptr<Staging> create_staging(size_t bytes) = 0;

  // ---- Continuous batching: prompt tokens one step should carry, by default, beside the decode
  // rows of running sequences. Each step waits for its chunk, so the chunk is a stall of every
  // running stream; past the size at which a chunk's tokens cost no less each, a longer one only
  // lengthens that stall. At least 1 (the scheduler refuses less).
  virtual int64_t prefill_chunk() const = 0;

  // ---- Step graphs, where the backend has them.
  virtual bool supports_graphs() const = 0;
  // Records what `enqueue` queues, without running it. Throws if the backend has no graphs.
  virtual std::unique_ptr<StepGraph> record(const std::function<void()>& enqueue) = 0;

  // ---- Sampling where the logits are, where the backend does it (see engine/ops sample_rows).
  virtual bool samples_on_device() const = 0;
  virtual void sample_rows(const float* logits, int64_t ld, int64_t n_rows, int64_t vocab, const SampleRow* rows,
                           const int32_t* tokens, uint8_t* presence, int64_t n_slots, const SampleParams& params,
                           SampleResult* out) = 0;
};

// The best a device does, measured now: the floor and ceiling `eagerlm bench` sets its numbers
// against. Zero where a figure does not apply (the CPU has no tensor-core math).
struct DeviceLimits {
  std::string name;             // the CPU's model name, or the GPU's
  double read_gbps = 0;         // memory bandwidth, GB/s (1e9 bytes/s), best pass
  double read_gbps_median = 0;  // the median pass (on a shared machine the two differ widely)
  std::string read_method;      // how read_gbps was measured, for reports
  double peak_gflops = 0;       // FP32 GEMM or FMA peak, GFLOP/s (an FMA counts 2)
  double peak_tf32_gflops = 0;  // GEMMs with GemmMath::kTf32, where the device has it
  double peak_bf16_gflops = 0;  // GEMMs with GemmMath::kBf16, where the device has it

  // The peak of the products under `math` (0 where the device has no such math).
  double peak_for(GemmMath math) const {
    return math == GemmMath::kTf32 ? peak_tf32_gflops : math == GemmMath::kBf16 ? peak_bf16_gflops : peak_gflops;
  }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  // Why the device cannot be used ("" when it can): no driver, no device, ...
  virtual std::string unavailable_reason() const = 0;

  // Raw memory (CPU memory is 64-byte aligned). allocate throws Error(kOutOfMemory).
  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* p) noexcept = 0;
  // Synchronous copies between this device and the host or within this device; a copy from the
  // device waits for the work queued before it.
  virtual void copy(void* dst, bool dst_on_device, const void* src, bool src_on_device, size_t bytes) = 0;
  virtual void zero(void* p, size_t bytes) = 0;
  // Bytes that could be allocated now (host: MemAvailable; CUDA: free device memory); 0 if unknown.
  virtual size_t available_bytes() const = 0;

  virtual std::unique_ptr<Queue> create_queue() = 0;

  // Measures bandwidth and peak (seconds of work; `threads` for the CPU, ignored elsewhere).
  virtual DeviceLimits measure_limits(int threads) = 0;
  // The bandwidth alone (name and read_* set, the peaks 0), as measure_limits measures it: for a
  // floor taken right before the decode it is set against, without the peaks' seconds of work.
  virtual DeviceLimits measure_read_bandwidth(int threads) = 0;

  // The layout a linear layer's weights of this type and shape run fastest in under this math:
  // input-major (GPT-2's Conv1D [in, out], as checkpoints hold them), output-major ([out, in], as
  // the tied head) or panels (any type). The loader holds the layer so; the products are right
  // in each.
  virtual WeightLayout linear_layout(WeightType /*type*/, int64_t /*inputs*/, int64_t /*outputs*/,
                                     GemmMath /*math*/) const {
    return WeightLayout::kInputMajor;
  }
};

// The backend of `device`; the first call for kCuda loads the CUDA module. Throws
// Error(kUnsupported) naming the module, or why the device is unusable, when it cannot be had.
Backend& backend_for(Device device);

}  // namespace eagerlm
