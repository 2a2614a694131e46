// cuda_mma.cuh — the m16n8k16 tensor-core step (mma.sync, sm_80+) and the
// packing of two floats into one of its 16-bit operand registers.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace qgemm::detail {

// Two floats → one 32-bit register of two bf16 (kBf16) or fp16 values, lo in
// bits 0–15, round to nearest even (cvt.rn.bf16x2.f32 / cvt.rn.f16x2.f32).
template <bool kBf16>
__device__ __forceinline__ uint32_t pack_half2(float lo, float hi) {
  if constexpr (kBf16) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
}

// c += a·b on one m16n8k16 tile, fp32 accumulators. PTX fragment layouts,
// g = lane / 4, t = lane % 4:
//   a (16×16, row-major): a0 = (row g, k 2t, 2t+1), a1 = (row g+8, same k),
//                         a2 = (row g, k 2t+8, 2t+9), a3 = (row g+8, k 2t+8, 2t+9)
//   b (16×8, k-major):    b0 = (k 2t, 2t+1, col g), b1 = (k 2t+8, 2t+9, col g)
//   c (16×8):             c0, c1 = (row g, cols 2t, 2t+1), c2, c3 = (row g+8, same cols)
template <bool kBf16>
__device__ __forceinline__ void mma_m16n8k16(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  if constexpr (kBf16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

}  // namespace qgemm::detail
