// The CUDA backend (engine/core/backend.h) over kernels/cuda/, built as the module
// libeagerlm-cuda.so that libeagerlm loads when Device::kCuda is first asked for. Each entry
// point turns the kernels' KernelError into the eagerlm::Error users see (same code, same text).
#include <memory>
#include <string>
#include <utility>

#include "eagerlm/version.h"
#include "engine/core/backend.h"
#include "engine/core/backend_module.h"
#include "engine/core/error.h"
#include "kernels/common/kernel_error.h"
#include "kernels/cuda/attention_split.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_graph.h"
#include "kernels/cuda/cuda_memory.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/cuda_probe.h"
#include "kernels/cuda/cuda_sampling.h"

namespace eagerlm {

namespace {

ErrorCode error_code_of(KernelFault fault) {
  switch (fault) {
    case KernelFault::kInvalidArgument: return ErrorCode::kInvalidArgument;
    case KernelFault::kUnsupported: return ErrorCode::kUnsupported;
    case KernelFault::kOutOfMemory: return ErrorCode::kOutOfMemory;
    case KernelFault::kInternal: return ErrorCode::kInternal;
  }
  return ErrorCode::kInternal;
}

// The typed-weight and 16-bit cache kernels of kernels/cuda compile, and test_cuda_ops checks them
// against the exact products and the CPU kernels (test_cuda_typed.cpp, the 16-bit-cache case of
// test_cuda_attention.cpp), but no GPU has run those tests yet (tools/gpu_check.sh does). Until
// one has, the backend refuses them rather than risk wrong numbers: f32 weights and an f32 cache.
[[noreturn]] void refuse_unverified(const std::string& what) {
  throw_error(ErrorCode::kUnsupported, what +
                                           " on CUDA are not supported yet (unverified on a GPU): "
                                           "use --weights f32 --kv-type f32 with --device cuda, or run on the CPU");
}
void require_f32_weights(const Weights& w) {
  if (w.type != WeightType::kF32) refuse_unverified(std::string(weight_type_name(w.type)) + " weights");
}
void require_f32_cache(const KvLayout& layout) {
  if (layout.dtype != DType::kF32)
    refuse_unverified(std::string(layout.dtype == DType::kBF16 ? "bf16" : "f16") + " KV caches");
}

// Runs body(), reporting a kernel failure as an eagerlm::Error.
template <typename Body>
auto guarded(Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const KernelError& e) {
    throw Error(error_code_of(e.fault()), e.what());
  }
}

class CudaStaging final : public Staging {
 public:
  CudaStaging(cuda::CudaContext& ctx, size_t bytes)
      : ctx_(ctx), buffer_(guarded([&] { return cuda::StagingBuffer(bytes); })) {}
  size_t capacity() const override { return buffer_.capacity(); }
  void* writable() override {
    return guarded([&] { return buffer_.writable(); });
  }
  void upload(void* device_dst, size_t bytes) override {
    guarded([&] { buffer_.upload(ctx_, device_dst, bytes); });
  }

 private:
  cuda::CudaContext& ctx_;
  cuda::StagingBuffer buffer_;
};

class CudaStepGraph final : public StepGraph {
 public:
  CudaStepGraph(cuda::CudaContext& ctx, cuda::CudaGraph graph) : ctx_(ctx), graph_(std::move(graph)) {}
  bool stale() const override { return graph_.stale(ctx_); }
  void launch() override {
    guarded([&] { graph_.launch(ctx_); });
  }

 private:
  cuda::CudaContext& ctx_;
  cuda::CudaGraph graph_;
};

struct ContextDeleter {
  void operator()(cuda::CudaContext* c) const noexcept { cuda::destroy_context(c); }
};

class CudaQueue final : public Queue {
 public:
  CudaQueue() : ctx_(guarded([] { return cuda::create_context(); })) {}

  void synchronize() override {
    guarded([&] { cuda::synchronize(*ctx_); });
  }
  QueueStats stats() const override { return {ctx_->scratch, ctx_->scratch_bytes}; }
  // cuBLAS applies the math to every weight type's GEMMs.
  void set_gemm_math(GemmMath math, WeightType /*weights*/) override { cuda::set_gemm_math(*ctx_, math); }

  void linear(const float* x, int64_t ldx, const float* w, const float* bias, float* y, int64_t ldy, int64_t m,
              int64_t k, int64_t n) override {
    guarded([&] { cuda::linear(*ctx_, x, ldx, w, bias, y, ldy, m, k, n); });
  }
  void linear_transposed(const float* x, int64_t ldx, const float* w, float* y, int64_t ldy, int64_t m, int64_t k,
                         int64_t n) override {
    guarded([&] { cuda::linear_transposed(*ctx_, x, ldx, w, y, ldy, m, k, n); });
  }
  void target_logprobs(const float* h, int64_t ldh, const float* w, const int32_t* targets, float* out, int64_t rows,
                       int64_t d, int64_t vocab) override {
    guarded([&] { cuda::target_logprobs(*ctx_, h, ldh, w, targets, out, rows, d, vocab); });
  }
  void linear_typed(const float* x, int64_t ldx, const Weights& w, const float* bias, float* y, int64_t ldy, int64_t m,
                    int64_t k, int64_t n) override {
    require_f32_weights(w);
    guarded([&] { cuda::linear_typed(*ctx_, x, ldx, w, bias, y, ldy, m, k, n); });
  }
  void linear_transposed_typed(const float* x, int64_t ldx, const Weights& w, float* y, int64_t ldy, int64_t m,
                               int64_t k, int64_t n) override {
    require_f32_weights(w);
    guarded([&] { cuda::linear_transposed_typed(*ctx_, x, ldx, w, y, ldy, m, k, n); });
  }
  void layer_norm(const float* x, const float* gamma, const float* beta, float* y, int64_t rows, int64_t cols,
                  float eps) override {
    guarded([&] { cuda::layer_norm(*ctx_, x, gamma, beta, y, rows, cols, eps); });
  }
  void gelu(const float* x, float* y, int64_t n) override {
    guarded([&] { cuda::gelu(*ctx_, x, y, n); });
  }
  void add(const float* a, const float* b, float* y, int64_t n) override {
    guarded([&] { cuda::add(*ctx_, a, b, y, n); });
  }
  void embedding(const int32_t* ids, const int32_t* positions, int64_t n_tokens, const Weights& wte, const float* wpe,
                 int64_t d_model, float* y) override {
    require_f32_weights(wte);
    guarded([&] { cuda::embedding(*ctx_, ids, positions, n_tokens, wte, wpe, d_model, y); });
  }
  void softmax(float* x, int64_t rows, int64_t cols, const int32_t* valid) override {
    guarded([&] { cuda::softmax(*ctx_, x, rows, cols, valid); });
  }
  void kv_append(const float* qkv, const StepBatch& batch, const KvLayout& layout, void* k_cache,
                 void* v_cache) override {
    require_f32_cache(layout);
    guarded([&] { cuda::kv_append(*ctx_, qkv, batch, layout, k_cache, v_cache); });
  }
  void kv_copy(const KvLayout& layout, void* k_cache, void* v_cache, int64_t src_slot, int64_t dst_slot,
               int64_t n_positions) override {
    require_f32_cache(layout);
    guarded([&] { cuda::kv_copy(*ctx_, layout, k_cache, v_cache, src_slot, dst_slot, n_positions); });
  }
  void attention(const float* qkv, int64_t ld_qkv, const StepBatch& batch, const KvLayout& layout, const void* k_cache,
                 const void* v_cache, float scale, float* out, int64_t ld_out) override {
    require_f32_cache(layout);
    guarded([&] { cuda::attention(*ctx_, qkv, ld_qkv, batch, layout, k_cache, v_cache, scale, out, ld_out); });
  }
  void fill_normal(rng::Key key, float stddev, DType dtype, void* out, int64_t n, uint64_t first_index) override {
    guarded([&] { cuda::fill_normal(*ctx_, key, stddev, dtype, out, n, first_index); });
  }
  void fill_constant(float value, DType dtype, void* out, int64_t n) override {
    guarded([&] { cuda::fill_constant(*ctx_, value, dtype, out, n); });
  }

  void reserve_step(int64_t max_rows, int64_t n_head, int64_t d_head, int64_t max_len) override {
    guarded([&] {
      cuda::reserve_attention_scratch(*ctx_, max_rows, n_head, d_head, max_len);
      // The typed-weight products' scratch: split-k partials of decode GEMVs (which graphs
      // capture) and prefill tiles; 24 MiB covers GPT-2 XL's largest (linear_typed.cu).
      cuda::reserve_typed_scratch(*ctx_, size_t(24) << 20);
    });
  }
  void reserve_target_logprobs(int64_t max_rows) override {
    guarded([&] { cuda::reserve_target_logprobs_scratch(*ctx_, max_rows); });
  }
  std::unique_ptr<Staging> create_staging(size_t bytes) override { return std::make_unique<CudaStaging>(*ctx_, bytes); }

  // A GPU needs hundreds of rows to fill its products; 256 is the scheduler's chunk from before
  // the backends chose one, not yet measured on a GPU.
  int64_t prefill_chunk() const override { return 256; }

  bool supports_graphs() const override { return true; }
  std::unique_ptr<StepGraph> record(const std::function<void()>& enqueue) override {
    cuda::CudaGraph graph = guarded([&] { return cuda::CudaGraph::capture(*ctx_, enqueue); });
    return std::make_unique<CudaStepGraph>(*ctx_, std::move(graph));
  }

  bool samples_on_device() const override { return true; }
  void sample_rows(const float* logits, int64_t ld, int64_t n_rows, int64_t vocab, const SampleRow* rows,
                   const int32_t* tokens, uint8_t* presence, int64_t n_slots, const SampleParams& params,
                   SampleResult* out) override {
    guarded([&] { cuda::sample_rows(*ctx_, logits, ld, n_rows, vocab, rows, tokens, presence, n_slots, params, out); });
  }

 private:
  std::unique_ptr<cuda::CudaContext, ContextDeleter> ctx_;
};

class CudaBackend final : public Backend {
 public:
  Device device() const override { return Device::kCuda; }
  std::string unavailable_reason() const override {
    return cuda::device_count() > 0 ? std::string() : std::string(cuda::unavailable_reason());
  }
  void* allocate(size_t bytes) override {
    return guarded([&] { return cuda::malloc_bytes(bytes); });
  }
  void release(void* p) noexcept override { cuda::free_bytes(p); }
  void copy(void* dst, bool dst_on_device, const void* src, bool src_on_device, size_t bytes) override {
    guarded([&] { cuda::copy_bytes(dst, dst_on_device, src, src_on_device, bytes); });
  }
  void zero(void* p, size_t bytes) override {
    guarded([&] { cuda::zero_bytes(p, bytes); });
  }
  size_t available_bytes() const override {
    return guarded([&] { return size_t(cuda::free_memory_bytes()); });
  }
  std::unique_ptr<Queue> create_queue() override { return std::make_unique<CudaQueue>(); }
  DeviceLimits measure_limits(int) override {
    return limits_of(guarded([] {
      std::unique_ptr<cuda::CudaContext, ContextDeleter> ctx(cuda::create_context());
      return cuda::probe_device(*ctx);
    }));
  }
  DeviceLimits measure_read_bandwidth(int) override {
    return limits_of(guarded([] {
      std::unique_ptr<cuda::CudaContext, ContextDeleter> ctx(cuda::create_context());
      return cuda::probe_copy_bandwidth(*ctx);
    }));
  }

 private:
  static DeviceLimits limits_of(const cuda::DeviceProbe& p) {
    DeviceLimits lim;
    lim.name = p.name;
    lim.read_gbps = p.copy_gbps;
    lim.read_gbps_median = p.copy_gbps_median;
    lim.read_method = "cudaMemcpyAsync of 1 GiB device to device, bytes read + written";
    lim.peak_gflops = p.fp32_gflops;
    lim.peak_tf32_gflops = p.tf32_gflops;
    lim.peak_bf16_gflops = p.bf16_gflops;
    return lim;
  }
};

Backend* module_backend(const char** error) {
  try {
    static CudaBackend* const backend = new CudaBackend;  // lives as long as the process
    return backend;
  } catch (...) {
    *error = "could not create the CUDA backend";
    return nullptr;
  }
}

const BackendModule kModule = {kBackendModuleAbi, EAGERLM_VERSION_STRING, &module_backend};

}  // namespace

}  // namespace eagerlm

extern "C" __attribute__((visibility("default"))) const eagerlm::BackendModule* eagerlm_backend_module() {
  return &eagerlm::kModule;
}
