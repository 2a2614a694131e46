// fused_access.cuh — element and vector access for the fused kernels:
// the storage type of each float dtype with its exact conversions
// (core/numeric.h, so stores round as the CPU does), and loads / stores of
// N consecutive elements as one access (N·sizeof(T) = 1…16 bytes, aligned).
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "core/numeric.h"
#include "qgemm/tensor.h"

namespace qgemm::detail::fused {

template <DType kDtype>
struct Elem;

template <>
struct Elem<DType::kFloat32> {
  using T = float;
  __device__ static float to_float(T x) { return x; }
  __device__ static T from_float(float f) { return f; }
};

template <>
struct Elem<DType::kBFloat16> {
  using T = uint16_t;
  __device__ static float to_float(T x) { return numeric::bf16_bits_to_float(x); }
  __device__ static T from_float(float f) { return numeric::float_to_bf16_bits(f); }
};

template <>
struct Elem<DType::kFloat16> {
  using T = uint16_t;
  // The hardware conversion is exact, like numeric::fp16_bits_to_float.
  __device__ static float to_float(T x) { return __half2float(__ushort_as_half(x)); }
  __device__ static T from_float(float f) { return numeric::float_to_fp16_bits(f); }
};

// N elements of T stored as one aligned access.
template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

template <typename T, int N>
__device__ __forceinline__ Pack<T, N> load_pack(const T* p) {
  return *reinterpret_cast<const Pack<T, N>*>(p);
}

template <typename T, int N>
__device__ __forceinline__ void store_pack(T* p, const Pack<T, N>& pack) {
  *reinterpret_cast<Pack<T, N>*>(p) = pack;
}

// N elements of a float dtype as stored: one aligned access.
template <DType kDtype, int N>
using FloatPack = Pack<typename Elem<kDtype>::T, N>;

template <DType kDtype, int N>
__device__ __forceinline__ FloatPack<kDtype, N> load_float_pack(const void* base, int64_t index) {
  return load_pack<typename Elem<kDtype>::T, N>(static_cast<const typename Elem<kDtype>::T*>(base) + index);
}

// A loaded pack widened to fp32.
template <DType kDtype, int N>
__device__ __forceinline__ void widen(const FloatPack<kDtype, N>& pack, float (&out)[N]) {
  if constexpr (kDtype == DType::kBFloat16 && N % 2 == 0) {
    // bf16 pairs straight from their 32-bit word (little-endian: element 2w
    // in the low half): one shift or one mask each, where widening the
    // halves one by one costs the high half an extract and a shift.
    uint32_t words[N / 2];
    __builtin_memcpy(words, pack.v, sizeof(words));
#pragma unroll
    for (int w = 0; w < N / 2; ++w) {
      out[2 * w] = numeric::bits_float(words[w] << 16);
      out[2 * w + 1] = numeric::bits_float(words[w] & 0xffff0000u);
    }
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) out[j] = Elem<kDtype>::to_float(pack.v[j]);
  }
}

// N consecutive elements of a float dtype, widened to fp32.
template <DType kDtype, int N>
__device__ __forceinline__ void load_floats(const void* base, int64_t index, float (&out)[N]) {
  widen<kDtype, N>(load_float_pack<kDtype, N>(base, index), out);
}

}  // namespace qgemm::detail::fused
