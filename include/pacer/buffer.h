#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace pacer {

/// A reference-counted, zero-copy view of bytes. The owner keeps the memory alive for as long as
/// any view of it exists; a view without an owner borrows memory the caller promises to keep alive
/// (ZPush/ZPull: until Wait returns).
class Buffer {
 public:
  /// An empty buffer.
  Buffer() = default;
  /// A view of `size` bytes at `data`, kept alive by `owner`; without one, the caller keeps the
  /// memory alive while the view is used.
  Buffer(const void* data, size_t size, std::shared_ptr<const void> owner = nullptr)
      : data_(static_cast<const uint8_t*>(data)), size_(size), owner_(std::move(owner)) {}

  /// Allocates `size` bytes aligned to 64 (cache line; enough for any SIMD load) and sets
  /// `*writable` to them, for filling before the buffer is shared.
  static Buffer Allocate(size_t size, uint8_t** writable);
  /// Takes ownership of a vector without copying it.
  template <typename T>
  static Buffer FromVector(std::vector<T>&& v) {
    auto owned = std::make_shared<std::vector<T>>(std::move(v));
    return Buffer(owned->data(), owned->size() * sizeof(T), owned);
  }
  /// Copies `size` bytes into a new owned buffer.
  static Buffer Copy(const void* data, size_t size);
  /// A view of memory its sender lent (values pushed from Session::AllocatePushMemory, read in
  /// place by a server on the same host): the sender may write it again once the request is
  /// answered, so whoever keeps it past the response must keep a copy (Owned).
  static Buffer Lent(const void* data, size_t size, std::shared_ptr<const void> owner) {
    Buffer b(data, size, std::move(owner));
    b.lent_ = true;
    return b;
  }
  /// Whether the bytes are lent (see Lent): valid only until the request they came with is
  /// answered.
  bool lent() const { return lent_; }
  /// This buffer, or a copy of it where it is lent.
  Buffer Owned() const { return lent_ ? Copy(data_, size_) : *this; }

  /// The first byte; nullptr for an empty buffer made by the default constructor.
  const uint8_t* data() const { return data_; }
  /// The number of bytes.
  size_t size() const { return size_; }
  /// Whether there are no bytes.
  bool empty() const { return size_ == 0; }
  /// What keeps the bytes alive; null for a borrowed view.
  const std::shared_ptr<const void>& owner() const { return owner_; }

  /// A view of [offset, offset + size) sharing this buffer's owner (and lent as this one is).
  /// The range must lie inside this buffer: it is not checked.
  Buffer Slice(size_t offset, size_t size) const {
    Buffer b(data_ + offset, size, owner_);
    b.lent_ = lent_;
    return b;
  }

  /// The bytes as an array of T; nullptr when empty, so `if (buffer.as<T>())` asks "is it there".
  template <typename T>
  const T* as() const {
    return size_ == 0 ? nullptr : reinterpret_cast<const T*>(data_);
  }
  /// How many whole T the bytes hold.
  template <typename T>
  size_t count() const {
    return size_ / sizeof(T);
  }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::shared_ptr<const void> owner_;
  bool lent_ = false;
};

}  // namespace pacer
