#include "engine/core/weight_convert.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "engine/core/dtype.h"
#include "engine/core/error.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/parallel.h"

namespace eagerlm {

namespace {

// Float32 elements widened at a time: 64 MiB of scratch at most.
constexpr int64_t kChunkElements = int64_t(16) << 20;

WeightTensor on_host(const WeightTensor& w) {
  if (w.device() == Device::kCpu) return w;
  WeightTensor h = w;
  h.data = w.data.to(Device::kCpu);
  if (w.scales.defined()) h.scales = w.scales.to(Device::kCpu);
  return h;
}

WeightTensor to_device(WeightTensor w, Device device) {
  if (w.device() == device) return w;
  w.data = w.data.to(device);
  if (w.scales.defined()) w.scales = w.scales.to(device);
  return w;
}

// The raw pointers of rows [r0, ...) of `w` (rows of its data tensor; for an input-major int8
// matrix r0 is a multiple of kInt8Block).
Weights rows_from(const Weights& w, WeightLayout layout, int64_t cols, int64_t r0) {
  Weights part = w;
  part.data = static_cast<const char*>(w.data) + size_t(r0 * cols) * weight_element_size(w.type);
  if (w.type == WeightType::kInt8)
    part.scales =
        w.scales + (layout == WeightLayout::kInputMajor ? (r0 / kInt8Block) * cols : r0 * (cols / kInt8Block));
  return part;
}

}  // namespace

WeightTensor convert_weight(const WeightTensor& source, WeightType type, Device device, const char* what,
                            const ConvertProgress& progress) {
  EAGERLM_ASSERT(source.data.rank() == 2 && source.data.is_contiguous());
  if (source.type == type) return to_device(source, device);
  if (type == WeightType::kInt8 && !int8_shape_ok(type, source.inputs()))
    throw_error(ErrorCode::kInvalidArgument, std::string(what) + ": int8 weights need a multiple of " +
                                                 std::to_string(kInt8Block) + " inputs per output; this matrix has " +
                                                 std::to_string(source.inputs()));
  const WeightTensor src = on_host(source);
  const Shape shape = src.data.shape();
  const int64_t rows = shape[0], cols = shape[1];
  const bool input_major = src.layout == WeightLayout::kInputMajor;

  WeightTensor out{type, src.layout, Tensor::empty(shape, storage_dtype(type), Device::kCpu), {}};
  if (type == WeightType::kInt8) out.scales = Tensor::empty(scale_shape(shape, src.layout), DType::kF32, Device::kCpu);
  const Weights from = src.view();
  const Weights to = out.view();

  // Input-major int8 (either side) is cut at whole blocks of rows: a block shares its scales.
  const bool blocked = input_major && (type == WeightType::kInt8 || src.type == WeightType::kInt8);
  const int64_t unit = blocked ? kInt8Block : 1;
  const int64_t chunk = std::max<int64_t>(unit, kChunkElements / std::max<int64_t>(cols, 1) / unit * unit);
  std::vector<float> scratch;
  if (src.type != WeightType::kF32) scratch.resize(size_t(std::min(rows, chunk) * cols));
  for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
    const int64_t r1 = std::min(rows, r0 + chunk), n = (r1 - r0) * cols;
    const float* f = static_cast<const float*>(from.data) + r0 * cols;
    if (src.type != WeightType::kF32) {
      cpu::widen_weights(rows_from(from, src.layout, cols, r0), r1 - r0, cols, input_major, scratch.data());
      f = scratch.data();
    }
    const Weights dst = rows_from(to, out.layout, cols, r0);
    void* dst_data = const_cast<void*>(dst.data);
    switch (type) {
      case WeightType::kF32: std::memcpy(dst_data, f, size_t(n) * sizeof(float)); break;
      case WeightType::kBF16:
      case WeightType::kF16: convert_from_f32(f, storage_dtype(type), dst_data, size_t(n)); break;
      case WeightType::kInt8:
        cpu::quantize_int8(f, r1 - r0, cols, input_major, static_cast<int8_t*>(dst_data),
                           const_cast<float*>(dst.scales));
        break;
    }
    if (progress) progress(r1 * cols);
  }
  return to_device(std::move(out), device);
}

namespace {

// dst[c][r] = src[r][c] for a rows × cols matrix of T, in tiles that stay in L1 on both sides.
template <typename T>
void transpose(const T* src, T* dst, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 64;
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  cpu::parallel_for(row_tiles, [&](int64_t t) {
    const int64_t r0 = t * kTile, r1 = std::min(rows, r0 + kTile);
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t c1 = std::min(cols, c0 + kTile);
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) dst[c * rows + r] = src[r * cols + c];
    }
  });
}

// Input-major [k, n] elements to panels (to_panels: the last panel's padding zero) or back, each
// panel on its own thread; at(i, j) is where W[i][j] sits in the panels (weights.h).
template <typename T, typename At>
void rearrange_panels(T* input_major, T* panels, int64_t k, int64_t n, bool to_panels, At at) {
  cpu::parallel_for(panel_count(n), [&](int64_t panel) {
    const int64_t j0 = panel * kPanelColumns;
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = j0; j < j0 + kPanelColumns; ++j) {
        T& held = panels[at(i, j)];
        if (j >= n) {
          if (to_panels) held = T(0);
          continue;
        }
        T& plain = input_major[i * n + j];
        if (to_panels) {
          held = plain;
        } else {
          plain = held;
        }
      }
  });
}

// The same for panels that hold each row's 32 outputs together (f32, f16 and int8 data: panel_index;
// int8 scales by block: int8_panel_scale_index): one copy of a row's 32 values at a time. (The
// element-wise walk above loaded a float32 GPT-2 124M in 0.43-0.63 s, this one in 0.19: most of
// the rest is the kernel zeroing the new pages, 650 MB with the head's copy.)
template <typename T>
void rearrange_row_panels(T* input_major, T* panels, int64_t rows, int64_t n, bool to_panels) {
  cpu::parallel_for(panel_count(n), [&](int64_t panel) {
    const int64_t j0 = panel * kPanelColumns, cols = std::min(kPanelColumns, n - j0);
    T* held_panel = panels + panel * rows * kPanelColumns;
    for (int64_t i = 0; i < rows; ++i) {
      T* plain = input_major + i * n + j0;
      T* held = held_panel + i * kPanelColumns;
      if (to_panels) {
        std::copy(plain, plain + cols, held);
        std::fill(held + cols, held + kPanelColumns, T(0));
      } else {
        std::copy(held, held + cols, plain);
      }
    }
  });
}

// Between input-major `plain` and panels `held` (both allocated), int8 scales included.
void rearrange_panels(const WeightTensor& plain, const WeightTensor& held, bool to_panels) {
  const int64_t k = plain.inputs(), n = plain.outputs();
  switch (plain.type) {
    case WeightType::kF32:
      rearrange_row_panels(static_cast<float*>(plain.data.raw()), static_cast<float*>(held.data.raw()), k, n,
                           to_panels);
      return;
    case WeightType::kF16:
      rearrange_row_panels(static_cast<uint16_t*>(plain.data.raw()), static_cast<uint16_t*>(held.data.raw()), k, n,
                           to_panels);
      return;
    case WeightType::kBF16:
      rearrange_panels(static_cast<uint16_t*>(plain.data.raw()), static_cast<uint16_t*>(held.data.raw()), k, n,
                       to_panels, [k](int64_t i, int64_t j) { return paired_panel_index(i, j, k); });
      return;
    case WeightType::kInt8:
      rearrange_row_panels(static_cast<int8_t*>(plain.data.raw()), static_cast<int8_t*>(held.data.raw()), k, n,
                           to_panels);
      rearrange_row_panels(static_cast<float*>(plain.scales.raw()), static_cast<float*>(held.scales.raw()),
                           k / kInt8Block, n, to_panels);
      return;
  }
}

// An empty matrix of w's type held in `layout` with this data shape (and its int8 scales).
WeightTensor empty_like(const WeightTensor& w, WeightLayout layout, const Shape& shape, int64_t panel_outputs = 0) {
  WeightTensor out{w.type, layout, Tensor::empty(shape, w.data.dtype(), Device::kCpu), {}, panel_outputs};
  if (w.type == WeightType::kInt8) out.scales = Tensor::empty(scale_shape(shape, layout), DType::kF32, Device::kCpu);
  return out;
}

}  // namespace

bool panels_fit(WeightType type, int64_t inputs) {
  if (type == WeightType::kF32 || type == WeightType::kF16) return true;
  if (type == WeightType::kInt8) return inputs % kInt8Block == 0;
  return type == WeightType::kBF16 && inputs % 2 == 0;
}

WeightTensor with_layout(const WeightTensor& w, WeightLayout layout) {
  if (w.layout == layout) return w;
  const bool int8 = w.type == WeightType::kInt8;
  if (w.device() != Device::kCpu || w.data.rank() != 2 || !w.data.is_contiguous() ||
      (int8 && (!w.scales.defined() || !w.scales.is_contiguous() || w.scales.dtype() != DType::kF32 ||
                w.scales.shape() != scale_shape(w.data.shape(), w.layout))))
    throw_error(ErrorCode::kInternal,
                "with_layout: only contiguous matrices on the CPU (int8 with their scales), got " +
                    std::string(weight_type_name(w.type)) + " " + w.data.describe());
  const int64_t k = w.inputs(), n = w.outputs();
  if (layout == WeightLayout::kPanels || w.layout == WeightLayout::kPanels) {
    if (!panels_fit(w.type, k))
      throw_error(ErrorCode::kInternal,
                  "with_layout: panels need f32, f16, bf16 with even inputs, or int8 with whole blocks, got " +
                      std::string(weight_type_name(w.type)) + " " + w.data.describe());
    if (layout == WeightLayout::kPanels) {
      const WeightTensor in = with_layout(w, WeightLayout::kInputMajor);
      const WeightTensor out = empty_like(w, layout, Shape{panel_count(n), k * kPanelColumns}, n);
      rearrange_panels(in, out, true);
      return out;
    }
    const WeightTensor in = empty_like(w, WeightLayout::kInputMajor, Shape{k, n});
    rearrange_panels(in, w, false);
    return with_layout(in, layout);
  }
  const int64_t rows = w.data.size(0), cols = w.data.size(1);
  const WeightTensor out = empty_like(w, layout, Shape{cols, rows});
  if (w.type == WeightType::kF32) {
    transpose(static_cast<const uint32_t*>(w.data.raw()), static_cast<uint32_t*>(out.data.raw()), rows, cols);
  } else if (int8) {
    transpose(static_cast<const uint8_t*>(w.data.raw()), static_cast<uint8_t*>(out.data.raw()), rows, cols);
    // [k/32, n] and [n, k/32]: the scales turn with the weights.
    transpose(static_cast<const uint32_t*>(w.scales.raw()), static_cast<uint32_t*>(out.scales.raw()), w.scales.size(0),
              w.scales.size(1));
  } else {
    transpose(static_cast<const uint16_t*>(w.data.raw()), static_cast<uint16_t*>(out.data.raw()), rows, cols);
  }
  return out;
}

}  // namespace eagerlm
