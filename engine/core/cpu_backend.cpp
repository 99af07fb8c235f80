// The CPU backend: host memory and a queue that runs each op at once on the CPU kernels
// (kernels/cpu/), on the calling thread and its OpenMP team.
#include "engine/core/cpu_backend.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/weight_convert.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/parallel.h"

namespace eagerlm {

namespace {

// Blocks this large get transparent huge pages: first-touching gigabytes of weights, caches or
// freshly initialized parameters in 4 KiB pages costs more than filling them.
constexpr size_t kHugePageThreshold = size_t(64) << 20;
// Blocks this large are zeroed by all the kernels' threads.
constexpr size_t kParallelZeroBytes = size_t(4) << 20;

void advise_huge_pages(void* data, size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kPage = 4096;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kPage - 1) & ~(kPage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kPage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // only advice
#else
  (void)data;
  (void)bytes;
#endif
}

// Step inputs are written straight into host memory; "uploading" them is one small copy.
class CpuStaging final : public Staging {
 public:
  explicit CpuStaging(size_t bytes) : bytes_(bytes) {}
  size_t capacity() const override { return bytes_.size(); }
  void* writable() override { return bytes_.data(); }
  void upload(void* device_dst, size_t bytes) override {
    if (bytes > bytes_.size())
      throw_error(ErrorCode::kInternal, "CPU staging: upload of " + std::to_string(bytes) + " bytes from a " +
                                            std::to_string(bytes_.size()) + "-byte buffer");
    std::memcpy(device_dst, bytes_.data(), bytes);
  }

 private:
  std::vector<unsigned char> bytes_;
};

class CpuQueue final : public Queue {
 public:
  void synchronize() override {}
  QueueStats stats() const override { return {}; }
  // bf16 is the typed kernels' own: the prefill of bf16 weights rounds activations to bf16 for
  // AMX tiles or AVX512_BF16 dot products; every other product stays fp32
  // (kernels/cpu/cpu_kernels.inc). Refused where the kernels in use have neither.
  void set_gemm_math(GemmMath math, WeightType weights) override {
    if (math == GemmMath::kTf32)
      throw_error(ErrorCode::kUnsupported,
                  "GEMM math tf32 needs a CUDA device; the CPU computes in fp32 (or bf16 for bf16 weights)");
    // Elsewhere the math would be fp32 under another name.
    if (math == GemmMath::kBf16 && weights != WeightType::kBF16)
      throw_error(ErrorCode::kUnsupported, std::string("GEMM math bf16 on the CPU is for bf16 weights; these are ") +
                                               weight_type_name(weights) + " (load them as bf16)");
    if (math == GemmMath::kBf16 && !cpu::has_bf16_gemm())
      throw_error(ErrorCode::kUnsupported, std::string("GEMM math bf16 on the CPU needs AVX512_BF16; the kernels "
                                                       "in use are the ") +
                                               cpu::active_isa() + " variant (the CPU computes in fp32)");
    math_ = math;
  }

  void linear(const float* x, int64_t ldx, const float* w, const float* bias, float* y, int64_t ldy, int64_t m,
              int64_t k, int64_t n) override {
    cpu::linear(x, ldx, w, bias, y, ldy, m, k, n);
  }
  void linear_transposed(const float* x, int64_t ldx, const float* w, float* y, int64_t ldy, int64_t m, int64_t k,
                         int64_t n) override {
    cpu::linear_transposed(x, ldx, w, y, ldy, m, k, n);
  }
  void target_logprobs(const float* h, int64_t ldh, const float* w, const int32_t* targets, float* out, int64_t rows,
                       int64_t d, int64_t vocab) override {
    cpu::target_logprobs(h, ldh, w, targets, out, rows, d, vocab);
  }
  void linear_typed(const float* x, int64_t ldx, const Weights& w, const float* bias, float* y, int64_t ldy, int64_t m,
                    int64_t k, int64_t n) override {
    cpu::linear_typed(x, ldx, w, bias, y, ldy, m, k, n, math_);
  }
  void linear_transposed_typed(const float* x, int64_t ldx, const Weights& w, float* y, int64_t ldy, int64_t m,
                               int64_t k, int64_t n) override {
    cpu::linear_transposed_typed(x, ldx, w, y, ldy, m, k, n, math_);
  }
  void linear_panels(const float* x, int64_t ldx, const Weights& w, const float* bias, float* y, int64_t ldy, int64_t m,
                     int64_t k, int64_t n) override {
    if (w.type == WeightType::kF32 || w.type == WeightType::kF16)
      return cpu::linear_row_panels(x, ldx, w, bias, y, ldy, m, k, n);
    if (w.type == WeightType::kInt8) return cpu::linear_int8_panels(x, ldx, w, bias, y, ldy, m, k, n);
    cpu::linear_paired(x, ldx, w, bias, y, ldy, m, k, n, math_);
  }
  void layer_norm(const float* x, const float* gamma, const float* beta, float* y, int64_t rows, int64_t cols,
                  float eps) override {
    cpu::layer_norm(x, gamma, beta, y, rows, cols, eps);
  }
  void gelu(const float* x, float* y, int64_t n) override { cpu::gelu(x, y, n); }
  void add(const float* a, const float* b, float* y, int64_t n) override { cpu::add(a, b, y, n); }
  void embedding(const int32_t* ids, const int32_t* positions, int64_t n_tokens, const Weights& wte, const float* wpe,
                 int64_t d_model, float* y) override {
    cpu::embedding(ids, positions, n_tokens, wte, wpe, d_model, y);
  }
  void softmax(float* x, int64_t rows, int64_t cols, const int32_t* valid) override {
    cpu::softmax(x, rows, cols, valid);
  }
  void kv_append(const float* qkv, const StepBatch& batch, const KvLayout& layout, void* k_cache,
                 void* v_cache) override {
    cpu::kv_append(qkv, batch, layout, k_cache, v_cache);
  }
  void kv_copy(const KvLayout& layout, void* k_cache, void* v_cache, int64_t src_slot, int64_t dst_slot,
               int64_t n_positions) override {
    cpu::kv_copy(layout, k_cache, v_cache, src_slot, dst_slot, n_positions);
  }
  void attention(const float* qkv, int64_t ld_qkv, const StepBatch& batch, const KvLayout& layout, const void* k_cache,
                 const void* v_cache, float scale, float* out, int64_t ld_out) override {
    cpu::attention(qkv, ld_qkv, batch, layout, k_cache, v_cache, scale, out, ld_out);
  }
  void fill_normal(rng::Key key, float stddev, DType dtype, void* out, int64_t n, uint64_t first_index) override {
    cpu::fill_normal(key, stddev, dtype, out, n, first_index);
  }
  void fill_constant(float value, DType dtype, void* out, int64_t n) override {
    cpu::fill_constant(value, dtype, out, n);
  }

  void reserve_step(int64_t, int64_t, int64_t, int64_t) override {}  // CPU kernels need no scratch
  void reserve_target_logprobs(int64_t) override {}                  // its scratch is per thread, kept between calls
  std::unique_ptr<Staging> create_staging(size_t bytes) override { return std::make_unique<CpuStaging>(bytes); }

  // 64: on a 2-core Zen 4, 64 requests at 8 slots (docs/benchmarks.md, "Prompt chunks of 64")
  // ran at 197 tokens/s with chunks of 64 against 205 with 256 (medians of 4 rounds; single runs
  // 189-211 either way), while the 99th percentile of a running stream's wait between two tokens
  // fell from 246-275 ms to 87-94 ms. A prompt token costs about as much in a chunk of 64 as in
  // one of 256: the products already run at 83-92 % of the FMA peak from 38 rows up.
  int64_t prefill_chunk() const override { return 64; }

  bool supports_graphs() const override { return false; }
  std::unique_ptr<StepGraph> record(const std::function<void()>&) override {
    throw_error(ErrorCode::kUnsupported, "the CPU backend does not record step graphs");
  }

  bool samples_on_device() const override { return false; }
  void sample_rows(const float*, int64_t, int64_t, int64_t, const SampleRow*, const int32_t*, uint8_t*, int64_t,
                   const SampleParams&, SampleResult*) override {
    throw_error(ErrorCode::kUnsupported, "the CPU backend samples on the host (engine/generation/sampling.h)");
  }

 private:
  GemmMath math_ = GemmMath::kFp32;
};

// MemAvailable from /proc/meminfo: what can be allocated without swapping; 0 if unknown.
size_t host_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    unsigned long long kib = 0;
    if (fields >> kib) return size_t(kib) * 1024;
  }
  return 0;
}

// The CPU's limits, at the vector width of the kernel variant that runs (kernels/cpu/probe.cpp):
// read bandwidth over 1 GiB (the floor of decode, which streams every weight once per token) and
// register-resident FMAs on every thread (the ceiling of prefill's GEMMs).
double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

DeviceLimits measure_cpu_read_bandwidth(int threads) {
  DeviceLimits lim;
  lim.name = cpu_model_name();
  const size_t n = (size_t(1) << 30) / sizeof(float);
  float* data = static_cast<float*>(std::aligned_alloc(64, n * sizeof(float)));
  if (!data) throw_error(ErrorCode::kOutOfMemory, "bandwidth probe: could not allocate 1 GiB");
  // First touch on the thread that will read each part.
  cpu::parallel_ranges(
      int64_t(n), [&](int64_t i0, int64_t i1) { std::fill(data + i0, data + i1, 1.0f); }, 16, threads);
  std::vector<double> gbps;
  volatile float sink = 0;
  for (int rep = 0; rep < 9; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    sink = sink + cpu::read_sum(data, int64_t(n), threads);
    gbps.push_back(double(n * sizeof(float)) / seconds_since(t0) / 1e9);
  }
  std::free(data);
  // Both the best pass (STREAM's convention: what the memory can deliver) and the median: on a
  // shared virtual machine the bandwidth available drifts widely within seconds.
  lim.read_gbps = *std::max_element(gbps.begin(), gbps.end());
  lim.read_gbps_median = median_of(gbps);
  lim.read_method = "sum of 1 GiB of floats, bytes read";
  return lim;
}

DeviceLimits measure_cpu_limits(int threads) {
  DeviceLimits lim = measure_cpu_read_bandwidth(threads);
  // The best of five passes (the bandwidth: of nine): a peak is what the cores can do, and on a
  // shared virtual machine two of three passes once ran at half of it (docs/benchmarks.md).
  constexpr int64_t kIters = 20000000;  // per thread
  constexpr int kPasses = 5;
  std::vector<double> gflops;
  for (int rep = 0; rep < kPasses; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    const double flops = cpu::fma_flops(kIters, threads);
    gflops.push_back(flops / seconds_since(t0) / 1e9);
  }
  lim.peak_gflops = *std::max_element(gflops.begin(), gflops.end());
  // The bf16 products of --gemm-math bf16 (AMX or AVX512_BF16), where the kernels have them.
  gflops.clear();
  for (int rep = 0; rep < kPasses; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    const double flops = cpu::bf16_flops(kIters, threads);
    if (flops <= 0) break;
    gflops.push_back(flops / seconds_since(t0) / 1e9);
  }
  if (!gflops.empty()) lim.peak_bf16_gflops = *std::max_element(gflops.begin(), gflops.end());
  return lim;
}

class CpuBackend final : public Backend {
 public:
  Device device() const override { return Device::kCpu; }
  std::string unavailable_reason() const override { return ""; }

  void* allocate(size_t bytes) override {
    const size_t rounded = (bytes == 0 ? 64 : (bytes + 63) / 64 * 64);
    void* p = std::aligned_alloc(64, rounded);
    if (!p)
      throw_error(ErrorCode::kOutOfMemory, "could not allocate " + std::to_string(bytes) + " bytes of host memory");
    if (rounded >= kHugePageThreshold) advise_huge_pages(p, rounded);
    return p;
  }
  void release(void* p) noexcept override { std::free(p); }
  void copy(void* dst, bool, const void* src, bool, size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
  }
  // Large blocks are zeroed by all the kernels' threads: a first touch of fresh pages (the KV
  // cache's) costs a page fault per page, which one thread pays slower.
  void zero(void* p, size_t bytes) override {
    if (bytes < kParallelZeroBytes) {
      if (bytes) std::memset(p, 0, bytes);
      return;
    }
    cpu::parallel_ranges(
        int64_t(bytes), [&](int64_t b0, int64_t b1) { std::memset(static_cast<char*>(p) + b0, 0, size_t(b1 - b0)); },
        4096);
  }
  size_t available_bytes() const override { return host_available_bytes(); }
  std::unique_ptr<Queue> create_queue() override { return std::make_unique<CpuQueue>(); }
  DeviceLimits measure_limits(int threads) override { return measure_cpu_limits(threads); }
  DeviceLimits measure_read_bandwidth(int threads) override { return measure_cpu_read_bandwidth(threads); }
  // Weights held as the kernels read them in place, with no packing per call, so that a decode
  // step of 8 sequences streams each matrix once:
  // - bf16 where the variant has AVX2 or AVX-512:
  //   - bf16 math with AMX: output-major, the tiles' first operand (bf16_gemm.h);
  //   - otherwise paired panels (linear_paired.cpp), for the AVX512_BF16 dot products under bf16
  //     math, for FMAs under fp32 math (one sequential stream per panel where input-major W is
  //     read row by row: one sequence decodes at about the bandwidth, docs/benchmarks.md);
  // - f32 and f16 where the variant has AVX2 or AVX-512, int8 where it has AVX-512: row panels
  //   (linear_row_panels.cpp, linear_int8_panels.cpp), for the same reason. (The avx2 variant's
  //   int8 tiles, 3 rows, were slower than input-major at 8 and 128 rows on a Zen 5; its f32 and
  //   bf16 tiles faster at every row count; its f16 tiles faster at 1 row and on the head, but
  //   the 8-row step slower: about 10 % for GPT-2 124M and a third for gpt2-xl on a Zen 5 while
  //   the tiles read f16 widened once. Converting in each tile up to 8 rows (row_tiles.h) took a
  //   Zen 3's 124M f16 step of 8 from 29.6 ms to 24.6, median of 9, docs/benchmarks.md.)
  // Inputs a multiple of 32 (whole vectors of pairs, whole int8 blocks; every GPT-2 size); the
  // panels take any outputs (the last one padded), the output head's vocabulary too.
  WeightLayout linear_layout(WeightType type, int64_t inputs, int64_t /*outputs*/, GemmMath math) const override {
    if (inputs % 32 != 0) return WeightLayout::kInputMajor;
    if (type == WeightType::kF32) return cpu::has_avx2_vectors() ? WeightLayout::kPanels : WeightLayout::kInputMajor;
    if (type == WeightType::kInt8) return cpu::has_avx512_vectors() ? WeightLayout::kPanels : WeightLayout::kInputMajor;
    if (!cpu::has_avx2_vectors()) return WeightLayout::kInputMajor;
    if (math == GemmMath::kBf16 && cpu::amx_enabled()) return WeightLayout::kOutputMajor;
    return panels_fit(type, inputs) ? WeightLayout::kPanels : WeightLayout::kInputMajor;
  }
};

}  // namespace

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "unknown CPU";
}

Backend& cpu_backend() {
  // Never destroyed: host tensors in static storage may be freed after other statics are gone.
  static CpuBackend* const backend = new CpuBackend;
  return *backend;
}

}  // namespace eagerlm
