// A buffer (of floats, or of the halves of a BF16/F16 cache) whose last element is directly followed by an inaccessible page, so a kernel that
// touches even one element past the end crashes the test instead of reading harmless memory.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>

namespace eagerlm::test {

template <class T>
class Guarded {
 public:
  Guarded(size_t n, T fill) : size_(n) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t data_bytes = (n * sizeof(T) + page - 1) / page * page;
    mapped_bytes_ = data_bytes + page;
    void* base = mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) throw std::bad_alloc();
    base_ = static_cast<char*>(base);
    if (mprotect(base_ + data_bytes, page, PROT_NONE) != 0) {
      munmap(base_, mapped_bytes_);
      throw std::bad_alloc();
    }
    data_ = reinterpret_cast<T*>(base_ + data_bytes) - n;  // ends at the guard page
    std::fill(data_, data_ + n, fill);
  }
  ~Guarded() { munmap(base_, mapped_bytes_); }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  size_t size_;
  size_t mapped_bytes_ = 0;
  char* base_ = nullptr;
  T* data_ = nullptr;
};

using GuardedFloats = Guarded<float>;

}  // namespace eagerlm::test
