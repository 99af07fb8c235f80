// A tensor: shape, strides (in elements), dtype and device over shared storage. Views (slices,
// reshapes of contiguous data) share the storage without copying; the storage frees itself when
// its last tensor goes away. Storage may also be borrowed (a memory-mapped file, an arena), in
// which case the owner of that memory must outlive the tensor.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/device.h"
#include "engine/core/dtype.h"

namespace eagerlm {

constexpr int kMaxRank = 4;

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(const std::vector<int64_t>& dims);

  int rank() const { return rank_; }
  int64_t operator[](int i) const { return dims_[size_t(i)]; }
  int64_t& operator[](int i) { return dims_[size_t(i)]; }
  int64_t numel() const;
  std::vector<int64_t> to_vector() const { return {dims_.begin(), dims_.begin() + rank_}; }
  std::string to_string() const;  // "[768, 2304]"
  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }

 private:
  int rank_ = 0;
  std::array<int64_t, kMaxRank> dims_{};
};

// A block of memory on one device. Owning storage frees it on destruction.
class Storage {
 public:
  Storage(void* data, size_t bytes, Device device, bool owning)
      : data_(data), bytes_(bytes), device_(device), owning_(owning) {}
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  static std::shared_ptr<Storage> allocate(size_t bytes, Device device);
  // Memory owned elsewhere; `keep_alive` (e.g. a memory-mapped file) is held until the storage
  // goes away, so tensors over a mapping cannot outlive it.
  static std::shared_ptr<Storage> borrow(void* data, size_t bytes, Device device,
                                         std::shared_ptr<const void> keep_alive = nullptr);

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

 private:
  void* data_;
  size_t bytes_;
  Device device_;
  bool owning_;
  std::shared_ptr<const void> keep_alive_;
};

class Tensor {
 public:
  Tensor() = default;

  // Allocates uninitialized contiguous memory.
  static Tensor empty(const Shape& shape, DType dtype = DType::kF32, Device device = Device::kCpu);
  static Tensor zeros(const Shape& shape, DType dtype = DType::kF32, Device device = Device::kCpu);
  // Wraps memory owned elsewhere (contiguous).
  static Tensor borrow(void* data, const Shape& shape, DType dtype, Device device);
  // A contiguous tensor over `storage` starting at byte `offset`.
  static Tensor over(std::shared_ptr<Storage> storage, size_t offset, const Shape& shape, DType dtype);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  int64_t size(int dim) const { return shape_[dim]; }
  int64_t stride(int dim) const { return strides_[size_t(dim)]; }
  int64_t numel() const { return shape_.numel(); }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_ ? storage_->device() : Device::kCpu; }
  size_t nbytes() const { return size_t(numel()) * dtype_size(dtype_); }
  bool is_contiguous() const;

  void* raw() const { return static_cast<char*>(storage_->data()) + offset_; }
  float* f32() const;  // checks dtype == F32
  template <typename T>
  T* data() const {
    return static_cast<T*>(raw());
  }

  // Views sharing storage.
  Tensor reshape(const Shape& shape) const;  // contiguous only; same numel
  Tensor slice(int dim, int64_t start, int64_t length) const;
  Tensor select(int dim, int64_t index) const;  // drops `dim`

  // Whether both are views of one block of memory (one allocation, one memory map).
  bool shares_storage_with(const Tensor& other) const { return storage_ && storage_ == other.storage_; }

  // Copies into a new contiguous tensor on `device` (converting dtype if asked).
  Tensor to(Device device) const;
  void copy_from(const Tensor& src);  // same shape/dtype; contiguous both

  std::string describe() const;  // "F32[2, 3] on cpu"

 private:
  std::shared_ptr<Storage> storage_;
  size_t offset_ = 0;  // bytes
  Shape shape_;
  std::array<int64_t, kMaxRank> strides_{};
  DType dtype_ = DType::kF32;

  void set_contiguous_strides();
};

}  // namespace eagerlm
