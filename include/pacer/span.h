#pragma once

#include <cstddef>
#include <vector>

namespace pacer {

/// A non-owning view of contiguous elements (std::span arrives only with C++20). The elements
/// must outlive the view.
template <typename T>
class Span {
 public:
  /// An empty view.
  Span() = default;
  /// A view of `size` elements at `data`.
  Span(T* data, size_t size) : data_(data), size_(size) {}
  /// A view of a vector's elements, so that a vector can be passed where a Span is taken; it
  /// lasts until the vector reallocates.
  template <typename U>
  Span(const std::vector<U>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT: implicit by design
  /// A view of a vector's elements (see the const overload).
  template <typename U>
  Span(std::vector<U>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT: implicit by design

  /// The first element.
  T* data() const { return data_; }
  /// The number of elements.
  size_t size() const { return size_; }
  /// Whether there are no elements.
  bool empty() const { return size_ == 0; }
  /// Element `i`, unchecked.
  T& operator[](size_t i) const { return data_[i]; }
  /// The first element, for range-based for.
  T* begin() const { return data_; }
  /// Past the last element.
  T* end() const { return data_ + size_; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace pacer
