// Weight matrices stored in reduced precision for the typed matrix-product kernels
// (kernels/cpu: linear_typed, linear_transposed_typed, gather_rows_typed). Activations and
// accumulation stay float32; only the weights are narrower, which is what decode's memory
// bandwidth pays for.
//
// Two layouts, both row-major, both the model's own:
//   input-major   [k (in), n (out)]: GPT-2's Conv1D weights, used by linear;
//   output-major  [n (out), k (in)]: the tied embedding wte [vocab, d], used by the output head
//                 (linear_transposed) and by embedding lookups (row gathers).
//
// and a third, the kernels' own, chosen at load where it is fastest (engine/core/backend.h):
//   panels        the outputs in panels of kPanelColumns (32), the last one padded with zero
//                 weights, each panel one sequential stream of what the kernels multiply by a
//                 broadcast x (linear_paired, linear_int8_panels, linear_row_panels):
//     bf16        [⌈n/32⌉][k/2][32][2] (k even, "paired panels"): for each pair of inputs p, the
//                 32 outputs' words (W[2p][j], W[2p+1][j]): the operand vdpbf16ps takes;
//     f32, f16,   [⌈n/32⌉][k][32] ("row panels"): for each input, the 32 outputs' values (f16 has
//     int8        no dot-product instruction to pair for, and a vector of it widens as it loads);
//                 int8's scales [⌈n/32⌉][k/32][32]: for each block of inputs, the 32 outputs'
//                 scales (padding 0).
//
// kBF16 and kF16 are IEEE-style halves (dtype.h's bf16_to_float / f16_to_float widen them
// exactly). kInt8 is symmetric int8 with one float scale per block of kInt8Block consecutive
// INPUTS (along k) of one output:
//   input-major   scales [k/32, n]:  W[i][j] = scales[(i/32)·n + j] · q[i][j]
//   output-major  scales [n, k/32]:  W[j][i] = scales[j·(k/32) + i/32] · q[j][i]
// so k must be a multiple of kInt8Block (GPT-2's d = 768/1024/1280/1600 and 4d all are); the
// callers (quantizer, model loader) check it with int8_shape_ok, the kernels trust it.
// q = round-to-nearest(w / s) with s = max|w| over the block / 127, so |q| <= 127 and an all-zero
// block has s = 0 and q = 0 (exactly zero weights). Per-block rather than per-output-channel
// scales: see test/kernels/test_quantize_int8.cpp for the measured error of both.
#pragma once

#include <cstddef>
#include <cstdint>

namespace eagerlm {

enum class WeightType : uint8_t { kF32, kBF16, kF16, kInt8 };
// The layouts above.
enum class WeightLayout : uint8_t { kInputMajor, kOutputMajor, kPanels };

// Inputs (along k) that share one int8 scale.
constexpr int64_t kInt8Block = 32;

// A weight matrix as the kernels see it: data in `type`, and for kInt8 its scales (else null).
struct Weights {
  WeightType type = WeightType::kF32;
  const void* data = nullptr;
  const float* scales = nullptr;
};

constexpr const char* weight_type_name(WeightType t) {
  return t == WeightType::kF32 ? "f32" : t == WeightType::kBF16 ? "bf16" : t == WeightType::kF16 ? "f16" : "int8";
}

// Outputs per panel of the panel layout, the panels of n outputs, and where W[i][j] (input i,
// output j) sits in it: bf16/f16 (paired), f32 and int8, and int8's scale of block b of output j.
constexpr int64_t kPanelColumns = 32;
constexpr int64_t panel_count(int64_t n) { return (n + kPanelColumns - 1) / kPanelColumns; }
constexpr int64_t paired_panel_index(int64_t i, int64_t j, int64_t k) {
  return (j / kPanelColumns) * (k * kPanelColumns) + (i / 2) * (2 * kPanelColumns) + (j % kPanelColumns) * 2 + i % 2;
}
constexpr int64_t panel_index(int64_t i, int64_t j, int64_t k) {
  return (j / kPanelColumns) * (k * kPanelColumns) + i * kPanelColumns + j % kPanelColumns;
}
constexpr int64_t int8_panel_scale_index(int64_t b, int64_t j, int64_t k) {
  return (j / kPanelColumns) * k + b * kPanelColumns + j % kPanelColumns;
}

// Bytes per stored element (scales not included).
constexpr size_t weight_element_size(WeightType t) {
  return t == WeightType::kF32 ? 4 : t == WeightType::kInt8 ? 1 : 2;
}

// Whether a matrix with k inputs can be stored as `t` (int8 needs whole blocks along k).
constexpr bool int8_shape_ok(WeightType t, int64_t k) { return t != WeightType::kInt8 || k % kInt8Block == 0; }

// Scales of a [k, n] input-major or [n, k] output-major int8 matrix (the same count either way);
// 0 for the other types.
constexpr int64_t weight_scale_count(WeightType t, int64_t k, int64_t n) {
  return t == WeightType::kInt8 ? k / kInt8Block * n : 0;
}

// Bytes of the stored elements, and of elements plus scales (what one pass over the matrix reads).
constexpr int64_t weight_data_bytes(WeightType t, int64_t k, int64_t n) {
  return k * n * int64_t(weight_element_size(t));
}
constexpr int64_t weight_total_bytes(WeightType t, int64_t k, int64_t n) {
  return weight_data_bytes(t, k, n) + weight_scale_count(t, k, n) * int64_t(sizeof(float));
}

}  // namespace eagerlm
