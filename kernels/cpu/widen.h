// Stored weights widened to float32 in bulk (widen.cpp), for whole-matrix conversions at load
// (widen_weights.cpp) and for row gathers. Declared inside the variant's namespace: include after
// isa_begin.h. Multiplying an int8 weight by its scale rounds once, as the GEMV paths do.
#pragma once

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

// out[i·cols + c] = W[i][j0 + c] for i < k, c < cols: a column panel of an input-major [k, n] W.
void widen_columns(const Weights& w, int64_t k, int64_t n, int64_t j0, int64_t cols, float* out);

// out[r·k + i] = W[row(r)][i] for r < rows, i < k, with row(r) = rows_index ? rows_index[r] :
// first_row + r: rows of an output-major [n, k] W.
void widen_rows(const Weights& w, int64_t k, int64_t first_row, const int32_t* rows_index, int64_t rows, float* out);

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA
