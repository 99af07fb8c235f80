// The prefill GEMM for bf16 weights under GemmMath::kBf16 (bf16_gemm.cpp), on AVX512_BF16 dot
// products: only in variants that have them (EAGERLM_CPU_HAS_AVX512BF16). Declared inside the
// variant's namespace: include after cpu_ops.h and isa_begin.h.
#pragma once

// The AMX engine (bf16_gemm_amx.cpp) where GCC can target the tiles: beside vdpbf16ps, chosen
// per call by cpu::amx_enabled().
#if defined(EAGERLM_CPU_HAS_AVX512BF16) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define EAGERLM_CPU_HAS_AMX_GEMM 1
#endif

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

#if defined(EAGERLM_CPU_HAS_AVX512BF16)
// Columns [n0, n1) of y[m, n] = bf16(x[m, k])·W (+ bias), float32 accumulation. W is bf16:
// input-major [k, n] (linear), or output-major [n, k] (linear_transposed; bias null). x is
// rounded to bf16 (nearest even), the products of two bf16 are exact in float32, the sums round.
void gemm_bf16(const float* x, int64_t ldx, const uint16_t* w, bool input_major, const float* bias, float* y,
               int64_t ldy, int64_t m, int64_t k, int64_t n, int64_t n0, int64_t n1);
#endif

#if defined(EAGERLM_CPU_HAS_AVX512BF16)
// xp[r·ldxp + p] = the bf16 pair (x[r][2p], x[r][2p+1]), each rounded to nearest even, for r < m
// and p < ldxp (zero past k): x as the 32-bit words vdpbf16ps and the tiles take. Written in whole
// vectors of 16 words, rows in order: with ldxp not a multiple of 16 a row's last vector runs
// into the next row (rewritten after it), and xp needs 15 words past the last row.
void pack_x_pairs(const float* x, int64_t ldx, int64_t m, int64_t k, uint32_t* xp, int64_t ldxp);
#endif

#if defined(EAGERLM_CPU_HAS_AVX512BF16)
// Whether a product of m rows with bf16 weights under GemmMath::kBf16 goes to gemm_bf16: W read in
// place where reads_w_in_place (below); otherwise W is packed per call, so the vector engine takes
// only what is past the caller's few-row kernels (`few_rows`, which read W in place), the AMX tiles
// from kMinAmxRows rows, one whole tile of x. Fewer rows pay for packing W and for padded tiles:
// eagerlm-bench-linear --types bf16 on a 2-core Sapphire Rapids, c_fc 768x3072, float32 few-row
// kernel against AMX: 8 rows 0.20 / 0.25 ms, 12 rows 0.39-0.42 / 0.48-0.50, 16 rows 0.43-0.44 /
// 0.42-0.44, 24 rows 0.54-0.64 / 0.38.
constexpr int64_t kMinAmxRows = 16;
// W output-major [n, k] with k a multiple of 32 (every GPT-2 head, and the linear layers of a model
// loaded with bf16 math on an AVX512_BF16 CPU) is read in place, with no packing, from 1 row of x:
// - by the AMX tiles (amx_rows_tile) up to kMaxDirectAmxRows: level with the float32 one-row
//   kernel over output-major W, c_attn transposed 0.14-0.18 ms either way (eagerlm-bench-linear on
//   a busy Sapphire Rapids); one tile of x, more rows would stream W once per 16;
// - else by vdpbf16ps dot products (gemm_vector_in_place) up to kMaxDirectVectorRows: on two Zen 4
//   threads at 32 rows the four block matrices took 0.18-0.87 ms in place against 0.25-0.95
//   packed by gathers, at 128 rows 0.65-3.2 against 0.50-2.0 (the dot products' sums across
//   lanes, and x read once per W row, catch up with the packing).
constexpr int64_t kMaxDirectAmxRows = 16, kMaxDirectVectorRows = 32;
inline bool reads_w_in_place(bool input_major, int64_t m, int64_t k) {
  int64_t most = kMaxDirectVectorRows;
#if defined(EAGERLM_CPU_HAS_AMX_GEMM)
  if (cpu::amx_enabled()) most = kMaxDirectAmxRows;
#endif
  return !input_major && k % 32 == 0 && m >= 1 && m <= most;
}
inline bool bf16_gemm_takes(int64_t m, int64_t few_rows, bool input_major, int64_t k) {
  if (reads_w_in_place(input_major, m, k)) return true;
#if defined(EAGERLM_CPU_HAS_AMX_GEMM)
  if (m >= kMinAmxRows && cpu::amx_enabled()) return true;
#endif
  return m > few_rows;
}
#endif

#if defined(EAGERLM_CPU_HAS_AMX_GEMM)
// The calling thread's tile registers: configured (all eight 16 rows × 64 bytes) and released.
void amx_begin();
void amx_end();
// c[rows, cols] = (first ? 0 : c) + xp[rows, pairs]·bp[pairs, cols] in bf16 pairs (words): xp
// rows ldxp words apart, bp rows (one pair of inputs each) ldbp words apart, c rows ldc floats
// apart. rows, cols and pairs are multiples of 16; between amx_begin and amx_end.
void amx_block(const uint32_t* xp, int64_t ldxp, const uint32_t* bp, int64_t ldbp, float* c, int64_t ldc, int64_t rows,
               int64_t cols, int64_t pairs, bool first);
// y^T tiles straight from W: out[i·16 + j] = Σ_k W[i][k]·x[j][k] for 16 rows of W, ldw halves
// apart (k of them, a multiple of 32, read in place), xt[p·ldxt + j] the bf16 pair (x[j][2p],
// x[j][2p + 1]) for 16 columns j. One tile of W rows at a time: 16 rows streamed side by side are
// what the prefetchers follow; 64 (four tiles, x loaded once for all) made a decode step of GPT-2
// 124M slower: 1 row 9.8-10.2 against 8.5-8.7 ms, 8 rows 11.8-12.3 against 10.9-11.0
// (eagerlm bench --weights bf16 --gemm-math bf16 --quick, Sapphire Rapids). Between amx_begin and
// amx_end.
void amx_rows_tile(const uint16_t* w, int64_t ldw, const uint32_t* xt, int64_t ldxt, int64_t pairs, float* out);
// The bench probe: `rounds` of four independent tile products from registers (between amx_begin
// and amx_end, which it calls); returns the floating-point operations done.
double amx_probe_flops(int64_t rounds);
#endif

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA
