#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace pacer {

/// Element types the hot path reads and writes: kF32 (IEEE single precision), kF16 (IEEE half
/// precision) and kBF16 (bfloat16: fp32's exponent, 7 bits of mantissa). Arithmetic is always done
/// in fp32.
enum class DType : uint8_t { kF32, kF16, kBF16 };

/// Bytes per element of type `t`.
inline size_t SizeOf(DType t) { return t == DType::kF32 ? 4 : 2; }

/// The name ParseDType reads back: "f32", "f16" or "bf16".
inline const char* NameOf(DType t) {
  switch (t) {
    case DType::kF32:
      return "f32";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
  }
  return "?";
}

/// Parses "f32"/"fp32"/"float", "f16"/"fp16"/"half", "bf16"; throws pacer::Error otherwise.
DType ParseDType(const std::string& name);

/// The bf16 whose bits are `h`, as a float (exact). This and the other scalar conversions are the
/// reference for every vectorized and CUDA kernel.
inline float Bf16ToFloat(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// The bits of `f` rounded to bf16: to nearest even, NaN stays NaN, overflow becomes infinity.
inline uint16_t FloatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

/// The fp16 whose bits are `h`, as a float (exact; a NaN comes back quiet).
float F16ToFloat(uint16_t h);
/// The bits of `f` rounded to fp16: to nearest even, NaN stays NaN, overflow becomes infinity.
uint16_t FloatToF16(float f);

/// A typed, non-owning view of elements in host or (on the CUDA back end) device memory; the
/// element count travels separately (Reducer's `count`).
struct ConstArray {
  const void* data = nullptr;  ///< the first element
  DType type = DType::kF32;    ///< the elements' type
};

/// A typed, non-owning view of elements to write, in host or (on the CUDA back end) device memory.
struct MutableArray {
  void* data = nullptr;      ///< the first element
  DType type = DType::kF32;  ///< the elements' type
};

}  // namespace pacer
