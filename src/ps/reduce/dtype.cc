#include "pacer/dtype.h"

#include "pacer/error.h"

namespace pacer {

DType ParseDType(const std::string& name) {
  if (name == "f32" || name == "fp32" || name == "float") return DType::kF32;
  if (name == "f16" || name == "fp16" || name == "half") return DType::kF16;
  if (name == "bf16") return DType::kBF16;
  throw Error("unknown element type '" + name + "' (expected f32, f16 or bf16)");
}

float F16ToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {  // infinity, or NaN made quiet as the hardware conversion does
    bits = sign | 0x7f800000u | (mantissa ? 0x400000u | (mantissa << 13) : 0u);
  } else if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in fp32
    float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-08f;
    std::memcpy(&bits, &magnitude, sizeof bits);
    bits |= sign;
  } else {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Round to nearest even, as vcvtps2ph with _MM_FROUND_TO_NEAREST_INT and CUDA's __float2half_rn.
uint16_t FloatToF16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((x >> 13) & 0x3ffu));
  if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504
  auto round = [](uint32_t value, uint32_t shift) {
    uint32_t r = value >> shift;
    const uint32_t rest = value & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (r & 1u))) ++r;  // a carry into the exponent is right
    return r;
  };
  if (x >= 0x38800000u) {  // normal in fp16: rebias the exponent by 127 - 15
    return static_cast<uint16_t>(sign | round(x - 0x38000000u, 13));
  }
  const uint32_t exponent = x >> 23;
  if (exponent < 102) return static_cast<uint16_t>(sign);    // below half the smallest subnormal
  const uint32_t significand = (x & 0x7fffffu) | 0x800000u;  // value = significand * 2^(e-150)
  return static_cast<uint16_t>(sign | round(significand, 126 - exponent));
}

}  // namespace pacer
