#pragma once

// Two lane policies with one interface, so each kernel body is written once: `Wide`, a vector of
// fp32 lanes of the instruction set the translation unit is built for, and `Narrow`, one lane in
// plain float arithmetic, for tails. Loads widen fp16/bf16 to fp32; stores narrow with
// round-to-nearest-even (the rounding of FloatToF16/FloatToBf16). Included only by the kernel
// translation units, each compiled with its own -m flags and its own PACER_KERNEL_NAMESPACE (so no
// inline function of one instruction set can stand in for another's at link time);
// PACER_SIMD_ISA picks the set: 0 portable, 1 AVX2+F16C+FMA, 2 AVX-512F/BW/VL.

#include <immintrin.h>

// GCC 12 warns that the AVX-512 narrowing intrinsics read an uninitialized __Y: its headers start
// them from _mm256_undefined_si256(), on purpose.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pacer/dtype.h"

namespace pacer::PACER_KERNEL_NAMESPACE {

struct F16 {  // tag types: the element type in memory is uint16_t for both
  uint16_t bits;
};
struct BF16 {
  uint16_t bits;
};

inline float ToFloat(float x) { return x; }
inline float ToFloat(F16 x) { return F16ToFloat(x.bits); }
inline float ToFloat(BF16 x) { return Bf16ToFloat(x.bits); }
template <typename T>
T FromFloat(float x);
template <>
inline float FromFloat<float>(float x) {
  return x;
}
template <>
inline F16 FromFloat<F16>(float x) {
  return F16{FloatToF16(x)};
}
template <>
inline BF16 FromFloat<BF16>(float x) {
  return BF16{FloatToBf16(x)};
}

struct Narrow {
  using V = float;
  static constexpr size_t kLanes = 1;
  static V Set1(float x) { return x; }
  static V Add(V a, V b) { return a + b; }
  static V Mul(V a, V b) { return a * b; }
  static V Div(V a, V b) { return a / b; }
  static V Sqrt(V a) { return std::sqrt(a); }
  // Through memcpy: a payload that follows a meta of odd length is not aligned to its element, and
  // a plain dereference of it would be undefined (x86 loads it either way; the sanitizer objects).
  template <typename T>
  static V Load(const T* p) {
    T x;
    std::memcpy(&x, p, sizeof x);
    return ToFloat(x);
  }
  template <bool kStream, typename T>
  static void Store(T* p, V v) {
    const T x = FromFloat<T>(v);
    std::memcpy(p, &x, sizeof x);
  }
};

#if PACER_SIMD_ISA == 2
struct WideIsa {
  using V = __m512;
  static constexpr size_t kLanes = 16;
  static V Set1(float x) { return _mm512_set1_ps(x); }
  static V Add(V a, V b) { return _mm512_add_ps(a, b); }
  static V Mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm512_div_ps(a, b); }
  static V Sqrt(V a) { return _mm512_sqrt_ps(a); }
  static V Load(const float* p) { return _mm512_loadu_ps(p); }
  static V Load(const F16* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static V Load(const BF16* p) {
    const __m512i wide =
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  }
  static __m256i NarrowBf16(V v) {
    const __m512i bits = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
    __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    rounded = _mm512_mask_or_epi32(rounded, nan, bits, _mm512_set1_epi32(0x400000));
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(rounded, 16));
  }
  static __m256i NarrowF16(V v) {
    return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }

  static void StoreF32(float* p, V v) { _mm512_storeu_ps(p, v); }
  static void StreamF32(float* p, V v) { _mm512_stream_ps(p, v); }
  static void StoreHalfBits(void* p, __m256i h) {
    _mm256_storeu_si256(static_cast<__m256i*>(p), h);
  }
  static void StreamHalfBits(void* p, __m256i h) {
    _mm256_stream_si256(static_cast<__m256i*>(p), h);
  }
};
#elif PACER_SIMD_ISA == 1
struct WideIsa {
  using V = __m256;
  static constexpr size_t kLanes = 8;
  static V Set1(float x) { return _mm256_set1_ps(x); }
  static V Add(V a, V b) { return _mm256_add_ps(a, b); }
  static V Mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm256_div_ps(a, b); }
  static V Sqrt(V a) { return _mm256_sqrt_ps(a); }
  static V Load(const float* p) { return _mm256_loadu_ps(p); }
  static V Load(const F16* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static V Load(const BF16* p) {
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  static __m128i NarrowBf16(V v) {
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    const __m256i rounded =
        _mm256_add_epi32(bits, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    const __m256i quieted = _mm256_or_si256(bits, _mm256_set1_epi32(0x400000));
    const __m256i high = _mm256_srli_epi32(_mm256_blendv_epi8(rounded, quieted, nan), 16);
    // packus works per 128-bit lane; the permute brings both lanes' halves into the low lane.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(high, high), 0xD8);
    return _mm256_castsi256_si128(packed);
  }
  static __m128i NarrowF16(V v) {
    return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }

  static void StoreF32(float* p, V v) { _mm256_storeu_ps(p, v); }
  static void StreamF32(float* p, V v) { _mm256_stream_ps(p, v); }
  static void StoreHalfBits(void* p, __m128i h) { _mm_storeu_si128(static_cast<__m128i*>(p), h); }
  static void StreamHalfBits(void* p, __m128i h) { _mm_stream_si128(static_cast<__m128i*>(p), h); }
};
#else
using Wide = Narrow;
#endif

#if PACER_SIMD_ISA > 0
// The stores of every instruction set, from its primitives: narrow 16-bit types first, stream
// (non-temporal) or not.
struct Wide : WideIsa {
  template <bool kStream>
  static void Store(float* p, V v) {
    kStream ? StreamF32(p, v) : StoreF32(p, v);
  }
  template <bool kStream>
  static void Store(F16* p, V v) {
    kStream ? StreamHalfBits(p, NarrowF16(v)) : StoreHalfBits(p, NarrowF16(v));
  }
  template <bool kStream>
  static void Store(BF16* p, V v) {
    kStream ? StreamHalfBits(p, NarrowBf16(v)) : StoreHalfBits(p, NarrowBf16(v));
  }
};
#endif

}  // namespace pacer::PACER_KERNEL_NAMESPACE
