#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "common/str_cat.h"
#include "pacer/buffer.h"
#include "pacer/error.h"

namespace pacer {

// Plain little-endian records of fixed-size fields and length-prefixed arrays, for state that
// moves between servers of one job (same binary, same byte order). The reader checks every length
// against what is left, so a malformed record gets an Error instead of a read out of bounds.
//
// A record is written in two passes over the same code: a ByteWriter without memory counts its
// bytes, then one over memory of that size (recycled, so its pages are not faulted in afresh)
// writes them.
class ByteWriter {
 public:
  ByteWriter() = default;  // counts
  ByteWriter(uint8_t* out, size_t capacity) : out_(out), capacity_(capacity) {}

  template <typename T>
  void Put(const T& value) {
    static_assert(std::is_trivially_copyable<T>::value, "fixed-size fields only");
    Write(&value, sizeof(T));
  }
  template <typename T>
  void PutArray(const T* values, size_t count) {
    static_assert(std::is_trivially_copyable<T>::value, "fixed-size fields only");
    Put(static_cast<uint64_t>(count));
    Write(values, count * sizeof(T));
  }
  template <typename T>
  void PutArray(const std::vector<T>& values) {
    PutArray(values.data(), values.size());
  }
  size_t size() const { return size_; }

 private:
  void Write(const void* bytes, size_t n) {
    if (out_ != nullptr) {
      if (n > capacity_ - size_) {
        throw Error(StrCat("a record outgrew the ", capacity_, " bytes counted for it"));
      }
      if (n > 0) std::memcpy(out_ + size_, bytes, n);
    }
    size_ += n;
  }

  uint8_t* out_ = nullptr;
  size_t capacity_ = 0;
  size_t size_ = 0;
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
  // An array: its length, then its elements.
  template <typename T>
  std::vector<T> GetArray() {
    size_t count = 0;
    const uint8_t* bytes = GetArrayBytes<T>(&count);
    std::vector<T> values(count);
    if (count > 0) std::memcpy(values.data(), bytes, count * sizeof(T));
    return values;
  }
  // An array in place: its length in *count, and a pointer to its (possibly unaligned) bytes.
  template <typename T>
  const uint8_t* GetArrayBytes(size_t* count) {
    const uint64_t n = Get<uint64_t>();
    if (n > (size_ - offset_) / sizeof(T)) {
      throw Error(StrCat(what_, ": an array of ", n, " elements of ", sizeof(T),
                         " bytes, but only ", size_ - offset_, " bytes are left"));
    }
    const uint8_t* bytes = data_ + offset_;
    offset_ += n * sizeof(T);
    *count = n;
    return bytes;
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

// A record in the two passes: `encode(ByteWriter&)` counts its bytes, then writes them into
// memory from `allocate(bytes, &writable)` (a recycled buffer, or Buffer::Allocate).
template <typename Allocate, typename Encode>
Buffer EncodeRecord(const Allocate& allocate, const Encode& encode) {
  ByteWriter size;
  encode(size);
  uint8_t* memory = nullptr;
  Buffer record = allocate(size.size(), &memory);
  ByteWriter out(memory, size.size());
  encode(out);
  return record;
}

}  // namespace pacer
