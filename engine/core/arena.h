// A bump allocator over one block of device memory: activations for a run are planned once
// (sized from the config, the maximum batch and the maximum length) and carved out of it, so no
// op allocates. reset() releases everything at once.
#pragma once

#include <cstddef>
#include <memory>

#include "engine/core/tensor.h"

namespace eagerlm {

class Arena {
 public:
  Arena() = default;
  Arena(size_t bytes, Device device);

  // A contiguous tensor from the arena; throws kInternal if the plan was too small.
  Tensor alloc(const Shape& shape, DType dtype = DType::kF32);
  void reset() { used_ = 0; }
  size_t capacity() const { return storage_ ? storage_->bytes() : 0; }
  size_t used() const { return used_; }
  Device device() const { return storage_ ? storage_->device() : Device::kCpu; }

  // Bytes a tensor of this shape and dtype takes in an arena (with alignment padding).
  static size_t footprint(const Shape& shape, DType dtype = DType::kF32);

 private:
  std::shared_ptr<Storage> storage_;
  size_t used_ = 0;
};

}  // namespace eagerlm
