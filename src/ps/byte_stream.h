#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "pacer/error.h"
#include "ps/str_cat.h"

namespace pacer {

// Plain little-endian records of fixed-size fields and length-prefixed arrays, for state that
// moves between servers of one job (same binary, same byte order). The reader checks every length
// against what is left, so a malformed record gets an Error instead of a read out of bounds.
class ByteWriter {
 public:
  template <typename T>
  void Put(const T& value) {
    static_assert(std::is_trivially_copyable<T>::value, "fixed-size fields only");
    const auto* p = reinterpret_cast<const uint8_t*>(&value);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
  }
  template <typename T>
  void PutArray(const T* values, size_t count) {
    Put(static_cast<uint64_t>(count));
    const auto* p = reinterpret_cast<const uint8_t*>(values);
    bytes_.insert(bytes_.end(), p, p + count * sizeof(T));
  }
  template <typename T>
  void PutArray(const std::vector<T>& values) {
    PutArray(values.data(), values.size());
  }
  std::vector<uint8_t>&& Take() { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
};

class ByteReader {
 public:
  // `what` names the record in errors.
  ByteReader(const uint8_t* data, size_t size, std::string what)
      : data_(data), size_(size), what_(std::move(what)) {}

  template <typename T>
  T Get() {
    T value;
    Need(sizeof(T));
    std::memcpy(&value, data_ + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }
  // An array's length, then a pointer to its (possibly unaligned) bytes.
  template <typename T>
  std::vector<T> GetArray() {
    const uint64_t count = Get<uint64_t>();
    if (count > (size_ - offset_) / sizeof(T)) {
      throw Error(StrCat(what_, ": an array of ", count, " elements of ", sizeof(T),
                         " bytes, but only ", size_ - offset_, " bytes are left"));
    }
    std::vector<T> values(count);
    std::memcpy(values.data(), data_ + offset_, count * sizeof(T));
    offset_ += count * sizeof(T);
    return values;
  }
  bool done() const { return offset_ == size_; }
  const std::string& what() const { return what_; }

 private:
  void Need(size_t bytes) const {
    if (bytes > size_ - offset_) {
      throw Error(StrCat(what_, ": truncated at byte ", offset_, " of ", size_, " (", bytes,
                         " more needed)"));
    }
  }
  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
  std::string what_;
};

}  // namespace pacer
