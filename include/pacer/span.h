#pragma once

#include <cstddef>
#include <vector>

namespace pacer {

// A non-owning view of contiguous elements (std::span arrives only with C++20).
template <typename T>
class Span {
 public:
  Span() = default;
  Span(T* data, size_t size) : data_(data), size_(size) {}
  template <typename U>
  Span(const std::vector<U>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT: implicit by design
  template <typename U>
  Span(std::vector<U>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT: implicit by design

  T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) const { return data_[i]; }
  T* begin() const { return data_; }
  T* end() const { return data_ + size_; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace pacer
