#pragma once

// Element types on the device: the C++ type behind each DType, conversions to and from the fp32
// the kernels compute in, and 16-byte chunk loads and stores.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "pacer/dtype.h"

namespace pacer::gpu {

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<T>{}) with T the C++ type that holds elements of `type`.
template <typename F>
decltype(auto) WithElementType(DType type, F&& f) {
  switch (type) {
    case DType::kF16:
      return f(TypeTag<__half>{});
    case DType::kBF16:
      return f(TypeTag<__nv_bfloat16>{});
    case DType::kF32:
      break;
  }
  return f(TypeTag<float>{});
}

__device__ inline float ToFloat(float x) { return x; }
__device__ inline float ToFloat(__half x) { return __half2float(x); }
__device__ inline float ToFloat(__nv_bfloat16 x) { return __bfloat162float(x); }

// Round to nearest even, overflow to infinity, NaN stays NaN: FloatToF16 and FloatToBf16 of
// pacer/dtype.h, except that a NaN's payload is not kept.
template <typename T>
__device__ T FromFloat(float x);
template <>
__device__ inline float FromFloat<float>(float x) {
  return x;
}
template <>
__device__ inline __half FromFloat<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ inline __nv_bfloat16 FromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// Two 16-bit elements in one 32-bit word, converted by one instruction.
template <typename T>
struct Pair;
template <>
struct Pair<__half> {
  using type = __half2;
  static __device__ float2 ToFloat2(__half2 p) { return __half22float2(p); }
  static __device__ __half2 FromFloat2(float a, float b) { return __floats2half2_rn(a, b); }
};
template <>
struct Pair<__nv_bfloat16> {
  using type = __nv_bfloat162;
  static __device__ float2 ToFloat2(__nv_bfloat162 p) { return __bfloat1622float2(p); }
  static __device__ __nv_bfloat162 FromFloat2(float a, float b) {
    return __floats2bfloat162_rn(a, b);
  }
};

// Elements per chunk: one 16-byte access of a 16-bit type, two of fp32.
constexpr int kChunk = 8;

// Reads kChunk elements from p, which must be 16-byte aligned.
template <typename T>
__device__ void LoadChunk(const T* p, float (&v)[kChunk]) {
  if constexpr (std::is_same_v<T, float>) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float4 f = reinterpret_cast<const float4*>(p)[h];
      v[4 * h] = f.x;
      v[4 * h + 1] = f.y;
      v[4 * h + 2] = f.z;
      v[4 * h + 3] = f.w;
    }
  } else {
    const uint4 raw = *reinterpret_cast<const uint4*>(p);
    typename Pair<T>::type pairs[kChunk / 2];
    memcpy(pairs, &raw, sizeof raw);
#pragma unroll
    for (int j = 0; j < kChunk / 2; ++j) {
      const float2 f = Pair<T>::ToFloat2(pairs[j]);
      v[2 * j] = f.x;
      v[2 * j + 1] = f.y;
    }
  }
}

// Writes kChunk elements to p, which must be 16-byte aligned.
template <typename T>
__device__ void StoreChunk(T* p, const float (&v)[kChunk]) {
  if constexpr (std::is_same_v<T, float>) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      reinterpret_cast<float4*>(p)[h] =
          make_float4(v[4 * h], v[4 * h + 1], v[4 * h + 2], v[4 * h + 3]);
    }
  } else {
    typename Pair<T>::type pairs[kChunk / 2];
#pragma unroll
    for (int j = 0; j < kChunk / 2; ++j) pairs[j] = Pair<T>::FromFloat2(v[2 * j], v[2 * j + 1]);
    uint4 raw;
    memcpy(&raw, pairs, sizeof raw);
    *reinterpret_cast<uint4*>(p) = raw;
  }
}

}  // namespace pacer::gpu
