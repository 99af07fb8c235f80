#include "engine/core/arena.h"

#include "engine/core/error.h"

namespace eagerlm {

static constexpr size_t kArenaAlign = 256;  // keeps every tensor cache-line and GPU-load aligned

Arena::Arena(size_t bytes, Device device) : storage_(Storage::allocate(bytes, device)) {}

size_t Arena::footprint(const Shape& shape, DType dtype) {
  const size_t bytes = size_t(shape.numel()) * dtype_size(dtype);
  return (bytes + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
}

Tensor Arena::alloc(const Shape& shape, DType dtype) {
  const size_t need = footprint(shape, dtype);
  if (!storage_ || used_ + need > storage_->bytes())
    throw_error(ErrorCode::kInternal, "activation arena too small for " + shape.to_string() + " (capacity " +
                                          std::to_string(capacity()) + " bytes)");
  Tensor t = Tensor::over(storage_, used_, shape, dtype);
  used_ += need;
  return t;
}

}  // namespace eagerlm
