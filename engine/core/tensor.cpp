#include "engine/core/tensor.h"

#include "engine/core/error.h"

namespace eagerlm {

Shape::Shape(std::initializer_list<int64_t> dims) : Shape(std::vector<int64_t>(dims)) {}

Shape::Shape(const std::vector<int64_t>& dims) {
  if (dims.size() > size_t(kMaxRank))
    throw_error(ErrorCode::kInternal, "tensor rank " + std::to_string(dims.size()) + " > 4");
  rank_ = int(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) throw_error(ErrorCode::kInternal, "negative tensor dimension");
    dims_[i] = dims[i];
  }
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int i = 0; i < rank_; ++i) n *= dims_[size_t(i)];
  return n;
}

std::string Shape::to_string() const {
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ", ";
    s += std::to_string(dims_[size_t(i)]);
  }
  return s + "]";
}

bool Shape::operator==(const Shape& o) const {
  if (rank_ != o.rank_) return false;
  for (int i = 0; i < rank_; ++i)
    if (dims_[size_t(i)] != o.dims_[size_t(i)]) return false;
  return true;
}

Storage::~Storage() {
  if (owning_) device_free(device_, data_);
}

std::shared_ptr<Storage> Storage::allocate(size_t bytes, Device device) {
  void* p = device_alloc(device, bytes);
  return std::make_shared<Storage>(p, bytes, device, true);
}

std::shared_ptr<Storage> Storage::borrow(void* data, size_t bytes, Device device,
                                         std::shared_ptr<const void> keep_alive) {
  auto s = std::make_shared<Storage>(data, bytes, device, false);
  s->keep_alive_ = std::move(keep_alive);
  return s;
}

void Tensor::set_contiguous_strides() {
  int64_t s = 1;
  for (int i = shape_.rank() - 1; i >= 0; --i) {
    strides_[size_t(i)] = s;
    s *= shape_[i];
  }
}

Tensor Tensor::over(std::shared_ptr<Storage> storage, size_t offset, const Shape& shape, DType dtype) {
  Tensor t;
  t.shape_ = shape;
  t.dtype_ = dtype;
  t.offset_ = offset;
  if (offset + t.nbytes() > storage->bytes())
    throw_error(ErrorCode::kInternal, "tensor " + shape.to_string() + " exceeds its storage");
  t.storage_ = std::move(storage);
  t.set_contiguous_strides();
  return t;
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  const size_t bytes = size_t(shape.numel()) * dtype_size(dtype);
  return over(Storage::allocate(bytes, device), 0, shape, dtype);
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  device_memset_zero(device, t.raw(), t.nbytes());
  return t;
}

Tensor Tensor::borrow(void* data, const Shape& shape, DType dtype, Device device) {
  const size_t bytes = size_t(shape.numel()) * dtype_size(dtype);
  return over(Storage::borrow(data, bytes, device), 0, shape, dtype);
}

bool Tensor::is_contiguous() const {
  int64_t s = 1;
  for (int i = rank() - 1; i >= 0; --i) {
    if (shape_[i] != 1 && strides_[size_t(i)] != s) return false;
    s *= shape_[i];
  }
  return true;
}

float* Tensor::f32() const {
  if (dtype_ != DType::kF32)
    throw_error(ErrorCode::kInternal, std::string("expected an F32 tensor, got ") + describe());
  return data<float>();
}

Tensor Tensor::reshape(const Shape& shape) const {
  if (!is_contiguous()) throw_error(ErrorCode::kInternal, "reshape of a non-contiguous tensor");
  if (shape.numel() != numel())
    throw_error(ErrorCode::kInternal, "reshape " + shape_.to_string() + " -> " + shape.to_string() + " changes numel");
  Tensor t = *this;
  t.shape_ = shape;
  t.set_contiguous_strides();
  return t;
}

Tensor Tensor::slice(int dim, int64_t start, int64_t length) const {
  if (dim < 0 || dim >= rank() || start < 0 || length < 0 || start + length > shape_[dim])
    throw_error(ErrorCode::kInternal, "slice out of range of " + describe());
  Tensor t = *this;
  t.offset_ += size_t(start * strides_[size_t(dim)]) * dtype_size(dtype_);
  t.shape_[dim] = length;
  return t;
}

Tensor Tensor::select(int dim, int64_t index) const {
  Tensor t = slice(dim, index, 1);
  std::vector<int64_t> dims;
  std::array<int64_t, kMaxRank> strides{};
  int k = 0;
  for (int i = 0; i < rank(); ++i) {
    if (i == dim) continue;
    dims.push_back(shape_[i]);
    strides[size_t(k++)] = strides_[size_t(i)];
  }
  t.shape_ = Shape(dims);
  t.strides_ = strides;
  return t;
}

Tensor Tensor::to(Device device) const {
  if (!is_contiguous()) throw_error(ErrorCode::kInternal, "copy of a non-contiguous tensor");
  Tensor t = empty(shape_, dtype_, device);
  device_copy(t.raw(), device, raw(), this->device(), nbytes());
  return t;
}

void Tensor::copy_from(const Tensor& src) {
  if (src.shape() != shape_ || src.dtype() != dtype_ || !is_contiguous() || !src.is_contiguous())
    throw_error(ErrorCode::kInternal, "copy_from " + src.describe() + " into " + describe());
  device_copy(raw(), device(), src.raw(), src.device(), nbytes());
}

std::string Tensor::describe() const {
  return std::string(dtype_name(dtype_)) + shape_.to_string() + " on " + device_name(device());
}

}  // namespace eagerlm
