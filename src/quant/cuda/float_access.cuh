// float_access.cuh — loads of fp32 / fp16 / bf16 elements as float, one at
// a time or as one 16-byte vector, for memory-bound CUDA kernels. All
// conversions are exact.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "qgemm/tensor.h"

namespace qgemm::detail {

template <DType kDtype>
struct FloatAccess;

template <>
struct FloatAccess<DType::kFloat32> {
  using Storage = float;
  static constexpr int kVec = 4;  // elements per 16 bytes
  __device__ static float load(const Storage* p) { return *p; }
  __device__ static void store(Storage* p, float v) { *p = v; }
};

template <>
struct FloatAccess<DType::kFloat16> {
  using Storage = __half;
  static constexpr int kVec = 8;
  __device__ static float load(const Storage* p) { return __half2float(*p); }
  __device__ static void store(Storage* p, float v) { *p = __float2half_rn(v); }
};

template <>
struct FloatAccess<DType::kBFloat16> {
  using Storage = __nv_bfloat16;
  static constexpr int kVec = 8;
  __device__ static float load(const Storage* p) { return __bfloat162float(*p); }
  __device__ static void store(Storage* p, float v) { *p = __float2bfloat16_rn(v); }
};

// Loads kVec consecutive elements starting at a 16-byte aligned address.
template <DType kDtype>
__device__ __forceinline__ void load_vector(const typename FloatAccess<kDtype>::Storage* p,
                                            float (&out)[FloatAccess<kDtype>::kVec]) {
  using A = FloatAccess<kDtype>;
  const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
  const auto* elements = reinterpret_cast<const typename A::Storage*>(&raw);
#pragma unroll
  for (int i = 0; i < A::kVec; ++i) out[i] = A::load(elements + i);
}

// Stores N bytes as one access (N = 4, 8 or 16, address aligned to N).
template <int N>
struct alignas(N) ByteVector {
  uint8_t bytes[N];
};

// Launch helper: true when `address` is a multiple of `alignment` bytes.
inline bool is_aligned(const void* address, size_t alignment) {
  return reinterpret_cast<uintptr_t>(address) % alignment == 0;
}

}  // namespace qgemm::detail
