// The entry points of cpu_ops.h: each forwards to the kernel table of the variant chosen for
// this CPU (see cpu_ops.h). Compiled once, for the baseline. Which variants exist is decided by
// the build (EAGERLM_CPU_HAVE_<ISA>); which one runs, here, on the first call.
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

#include "kernels/cpu/kernel_table.h"

namespace eagerlm::cpu {

#ifdef EAGERLM_CPU_HAVE_AVX512BF16
extern const KernelTable kernels_avx512bf16;
#endif
#ifdef EAGERLM_CPU_HAVE_AVX512
extern const KernelTable kernels_avx512;
#endif
#ifdef EAGERLM_CPU_HAVE_AVX2
extern const KernelTable kernels_avx2;
#endif
#ifdef EAGERLM_CPU_HAVE_GENERIC
extern const KernelTable kernels_generic;
#endif
#ifdef EAGERLM_CPU_HAVE_NATIVE
extern const KernelTable kernels_native;
#endif

namespace {

#if defined(EAGERLM_CPU_HAVE_AVX2) || defined(EAGERLM_CPU_HAVE_AVX512)  // GCC-built x86-64 variants
[[maybe_unused]] bool has_avx2() {
  return __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("f16c") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
}
[[maybe_unused]] bool has_avx512() {
  return has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}
[[maybe_unused]] bool has_avx512bf16() {
  return has_avx512() && __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512vnni") &&
         __builtin_cpu_supports("avx512vbmi");
}
#endif
[[maybe_unused]] bool always() { return true; }

struct Variant {
  const KernelTable* table;
  bool (*runs_here)();
};

// Best first.
const Variant kVariants[] = {
#ifdef EAGERLM_CPU_HAVE_NATIVE
    {&kernels_native, always},  // built for the build machine (EAGERLM_NATIVE=ON)
#endif
#ifdef EAGERLM_CPU_HAVE_AVX512BF16
    {&kernels_avx512bf16, has_avx512bf16},
#endif
#ifdef EAGERLM_CPU_HAVE_AVX512
    {&kernels_avx512, has_avx512},
#endif
#ifdef EAGERLM_CPU_HAVE_AVX2
    {&kernels_avx2, has_avx2},
#endif
#ifdef EAGERLM_CPU_HAVE_GENERIC
    {&kernels_generic, always},
#endif
};

std::atomic<const KernelTable*> g_active{nullptr};
std::once_flag g_chosen;
std::string g_request_problem;

const KernelTable* find_supported(const std::string& isa) {
  for (const Variant& v : kVariants)
    if (isa == v.table->isa && v.runs_here()) return v.table;
  return nullptr;
}

void choose() {
  const KernelTable* best = nullptr;
  for (const Variant& v : kVariants)
    if (!best && v.runs_here()) best = v.table;
  if (const char* wanted = std::getenv("EAGERLM_CPU_ISA"); wanted && *wanted) {
    if (const KernelTable* t = find_supported(wanted)) {
      best = t;
    } else {
      std::string names;
      for (const std::string& s : supported_isas()) names += (names.empty() ? "" : ", ") + s;
      g_request_problem = std::string("EAGERLM_CPU_ISA=") + wanted + " is not a variant this CPU runs (" + names +
                          "); using " + best->isa;
    }
  }
  g_active.store(best, std::memory_order_release);
}

inline const KernelTable& active() {
  const KernelTable* t = g_active.load(std::memory_order_acquire);
  if (__builtin_expect(t == nullptr, 0)) {
    std::call_once(g_chosen, choose);
    t = g_active.load(std::memory_order_acquire);
  }
  return *t;
}

}  // namespace

std::vector<std::string> supported_isas() {
  std::vector<std::string> out;
  for (const Variant& v : kVariants)
    if (v.runs_here()) out.push_back(v.table->isa);
  return out;
}

const char* active_isa() { return active().isa; }

bool has_bf16_gemm() { return active().has_bf16_gemm; }

bool has_avx512_vectors() { return active().has_avx512; }
bool has_avx2_vectors() { return active().has_avx2; }

const std::string& isa_request_problem() {
  (void)active();
  return g_request_problem;
}

ScopedIsa::ScopedIsa(const std::string& isa) : previous_(&active()) {
  const KernelTable* t = find_supported(isa);
  if (!t) throw std::invalid_argument("CPU variant '" + isa + "' is not built or not supported by this CPU");
  g_active.store(t, std::memory_order_release);
}

ScopedIsa::~ScopedIsa() { g_active.store(static_cast<const KernelTable*>(previous_), std::memory_order_release); }

// ---- Entry points.
void linear(const float* x, int64_t ldx, const float* w, const float* bias, float* y, int64_t ldy, int64_t m, int64_t k,
            int64_t n) {
  active().linear(x, ldx, w, bias, y, ldy, m, k, n);
}
void linear_transposed(const float* x, int64_t ldx, const float* w, float* y, int64_t ldy, int64_t m, int64_t k,
                       int64_t n) {
  active().linear_transposed(x, ldx, w, y, ldy, m, k, n);
}
void linear_typed(const float* x, int64_t ldx, const Weights& w, const float* bias, float* y, int64_t ldy, int64_t m,
                  int64_t k, int64_t n, GemmMath math) {
  active().linear_typed(x, ldx, w, bias, y, ldy, m, k, n, math);
}
void linear_transposed_typed(const float* x, int64_t ldx, const Weights& w, float* y, int64_t ldy, int64_t m, int64_t k,
                             int64_t n, GemmMath math) {
  active().linear_transposed_typed(x, ldx, w, y, ldy, m, k, n, math);
}
void linear_paired(const float* x, int64_t ldx, const Weights& w, const float* bias, float* y, int64_t ldy, int64_t m,
                   int64_t k, int64_t n, GemmMath math) {
  active().linear_paired(x, ldx, w, bias, y, ldy, m, k, n, math);
}
void linear_int8_panels(const float* x, int64_t ldx, const Weights& w, const float* bias, float* y, int64_t ldy,
                        int64_t m, int64_t k, int64_t n) {
  active().linear_int8_panels(x, ldx, w, bias, y, ldy, m, k, n);
}
void linear_row_panels(const float* x, int64_t ldx, const Weights& w, const float* bias, float* y, int64_t ldy,
                       int64_t m, int64_t k, int64_t n) {
  active().linear_row_panels(x, ldx, w, bias, y, ldy, m, k, n);
}
void gather_rows_typed(const Weights& w, int64_t k, const int32_t* rows, int64_t n_rows, float* out) {
  active().gather_rows_typed(w, k, rows, n_rows, out);
}
void widen_weights(const Weights& w, int64_t rows, int64_t cols, bool input_major, float* out) {
  active().widen_weights(w, rows, cols, input_major, out);
}
void quantize_int8(const float* w, int64_t rows, int64_t cols, bool input_major, int8_t* q, float* scales) {
  active().quantize_int8(w, rows, cols, input_major, q, scales);
}
void target_logprobs(const float* h, int64_t ldh, const float* w, const int32_t* targets, float* out, int64_t rows,
                     int64_t d, int64_t vocab) {
  active().target_logprobs(h, ldh, w, targets, out, rows, d, vocab);
}
void layer_norm(const float* x, const float* gamma, const float* beta, float* y, int64_t rows, int64_t cols,
                float eps) {
  active().layer_norm(x, gamma, beta, y, rows, cols, eps);
}
void gelu(const float* x, float* y, int64_t n) { active().gelu(x, y, n); }
void add(const float* a, const float* b, float* y, int64_t n) { active().add(a, b, y, n); }
void embedding(const int32_t* ids, const int32_t* positions, int64_t n_tokens, const Weights& wte, const float* wpe,
               int64_t d_model, float* y) {
  active().embedding(ids, positions, n_tokens, wte, wpe, d_model, y);
}
void softmax(float* x, int64_t rows, int64_t cols, const int32_t* valid) { active().softmax(x, rows, cols, valid); }
void kv_append(const float* qkv, const StepBatch& batch, const KvLayout& layout, void* k_cache, void* v_cache) {
  active().kv_append(qkv, batch, layout, k_cache, v_cache);
}
void kv_copy(const KvLayout& layout, void* k_cache, void* v_cache, int64_t src_slot, int64_t dst_slot,
             int64_t n_positions) {
  active().kv_copy(layout, k_cache, v_cache, src_slot, dst_slot, n_positions);
}
void attention(const float* qkv, int64_t ld_qkv, const StepBatch& batch, const KvLayout& layout, const void* k_cache,
               const void* v_cache, float scale, float* out, int64_t ld_out) {
  active().attention(qkv, ld_qkv, batch, layout, k_cache, v_cache, scale, out, ld_out);
}
void convert_to_f32(const void* src, DType from, float* dst, int64_t n) { active().convert_to_f32(src, from, dst, n); }
void convert_from_f32(const float* src, DType to, void* dst, int64_t n) { active().convert_from_f32(src, to, dst, n); }
void fill_normal_f32(rng::Key key, float stddev, float* out, int64_t n, uint64_t first_index) {
  active().fill_normal_f32(key, stddev, out, n, first_index);
}
void fill_normal(rng::Key key, float stddev, DType dtype, void* out, int64_t n, uint64_t first_index) {
  active().fill_normal(key, stddev, dtype, out, n, first_index);
}
void fill_constant(float value, DType dtype, void* out, int64_t n) { active().fill_constant(value, dtype, out, n); }
void fill_random_bits32(rng::Key key, uint32_t* out, int64_t n, uint64_t first_index) {
  active().fill_random_bits32(key, out, n, first_index);
}
void fill_uniform_f32(rng::Key key, float lo, float width, float* out, int64_t n, uint64_t first_index) {
  active().fill_uniform_f32(key, lo, width, out, n, first_index);
}
void fill_erfinv_scaled_f32(rng::Key key, float scale, float* out, int64_t n, uint64_t first_index) {
  active().fill_erfinv_scaled_f32(key, scale, out, n, first_index);
}
void erf_inv_f32(const float* in, float* out, int64_t n) { active().erf_inv_f32(in, out, n); }
void fma_f32(const float* a, const float* b, const float* c, float* out, int64_t n) {
  active().fma_f32(a, b, c, out, n);
}
float read_sum(const float* data, int64_t n, int threads) { return active().read_sum(data, n, threads); }
double fma_flops(int64_t iterations, int threads) { return active().fma_flops(iterations, threads); }
double bf16_flops(int64_t iterations, int threads) { return active().bf16_flops(iterations, threads); }

}  // namespace eagerlm::cpu
