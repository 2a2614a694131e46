// wonly_dequant_scaled.cuh — bf16 int4 dequantization with one HFMA2 per
// pair, for the decode kernel (wonly_gemv.cu), bit-exact to wonly_math.h's
// ŵ = round_T(q·s_T + o_T) up to a power of two.
//
// The magic form (dequant_int4_word, wonly_device.cuh) makes 128 + q from the
// bits 0x4300 | q and needs a second HFMA2 to remove the 128 before the
// scaling (folding it into the offset would round differently). Here the
// bf16 bits 0x000q are the subnormal q·2^-133 — no implicit leading 1, so
// nothing to remove — and the scale carries the 2^133 back:
//
//   fma(q·2^-133, s_T·2^125, o_T·2^-8) = round_T(2^-8·(q·s_T + o_T))
//                                      = 2^-8·round_T(q·s_T + o_T) = 2^-8·ŵ
//
// (fma rounds the exact q·s_T·2^-8 + o_T·2^-8 once). Both steps are exact
// while every value stays a normal bf16: scaling by 2^-8 then commutes with
// rounding to nearest even (`scaled_dequant_exact` says when). The tensor
// cores multiply 2^-8·ŵ, so the accumulators hold 2^-8 of the sums, and a
// multiply by 2^8 at the end restores them — exact in fp32, and the same
// bits as accumulating ŵ, since a power of two scales every product and
// partial sum alike.
//
// Per 8 int4 elements: 2 LOP3 + 1 SHF + 4 PRMT + 4 HFMA2 = 11 instructions,
// where the magic form takes 17 (2 LOP3 + 1 SHF + 6 PRMT + 8 HFMA2); the
// chain load → HMMA is two steps shorter (LOP3 → PRMT → HFMA2 → HMMA).
#pragma once

#include <cstdint>

#include "wonly/cuda/wonly_device.cuh"

namespace qgemm::detail::wonly {

constexpr float kScaledAccFactor = 256.0f;  // 2^8: the accumulators hold 2^-8 of the sums

// prmt.b32 in its default mode: selector nibble i picks byte i of the result
// from the 8 bytes {a, b} (bits 0–2), or, with bit 3 set, fills it with the
// sign bit of that byte (0x00 for a byte below 0x80). `__byte_perm` keeps
// only the low 3 bits of each nibble, so it cannot make the zero bytes.
__device__ __forceinline__ uint32_t prmt_signed(uint32_t a, uint32_t b, uint32_t selector) {
  uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(selector));
  return d;
}

// Whether the scaled form is exact for a scale s and offset o (floats whose
// bf16 rounding is s_T, o_T): s_T·2^125 finite (|s| < 7.5, so that s_T < 8);
// s_T and o_T zero or at least 2^-110, so q·s_T + o_T, a multiple of 2^-117,
// is 0 or at least 2^-117 and its 2^-8 a normal bf16 (≥ 2^-126); and
// |o| < 2^120, so that the unscaled ŵ is finite. NaN and ±inf fail. Real
// weights are far inside (group scales ~2^-10…2^-3). Bitwise & and |, not
// && and ||: the compares then chain into predicates with no branch (the
// short-circuit form cost the decode loop ~20 SASS instructions per K tile).
__device__ __forceinline__ bool scaled_dequant_exact(float s, float o) {
  const float as = fabsf(s), ao = fabsf(o);
  return (as < 7.5f) & (ao < 0x1p120f) & ((as >= 0x1p-110f) | (as == 0.0f)) & ((ao >= 0x1p-110f) | (ao == 0.0f));
}

// (s_T·2^125, s_T·2^125) and (o_T·2^-8, o_T·2^-8): the fp32 products are
// exact and round to bf16 as s and o do (within scaled_dequant_exact's range).
__device__ __forceinline__ uint32_t scaled_scale2(float s) { return param2<true>(s * 0x1p125f); }
__device__ __forceinline__ uint32_t scaled_offset2(float o) { return param2<true>(o * 0x1p-8f); }

// Eight int4 elements (element e in bits 4e…4e+3) → pairs (e0,e1), (e2,e3),
// (e4,e5), (e6,e7) of 2^-8·ŵ, given scaled_scale2 / scaled_offset2 pairs.
// Each pair's register is e_even | e_odd << 16 — two subnormal bf16 — made
// by one PRMT from the nibbles spread into bytes.
__device__ __forceinline__ void dequant_int4_word_scaled(uint32_t word, uint32_t s2, uint32_t o2,
                                                         uint32_t pairs[4]) {
  const uint32_t even = word & 0x0f0f0f0fu;        // bytes: e0 e2 e4 e6
  const uint32_t odd = (word >> 4) & 0x0f0f0f0fu;  // bytes: e1 e3 e5 e7
  // Pair p: bytes [even.p, 0, odd.p, 0]; selector 8 = the sign of byte 0 of
  // `even` (< 0x80), i.e. a zero byte.
  constexpr uint32_t kSelect[4] = {0x8480u, 0x8581u, 0x8682u, 0x8783u};
#pragma unroll
  for (int p = 0; p < 4; ++p) pairs[p] = fma2<true>(prmt_signed(even, odd, kSelect[p]), s2, o2);
}

// mma_chunk_word (wonly_device.cuh) for bf16 int4 in the scaled form: the
// word's two rows' elements times the activations, into accumulators of
// 2^-8 of the sums.
template <int kTokenBlocks, int kActWords>
__device__ __forceinline__ void mma_chunk_word_scaled(uint32_t lo_word, uint32_t hi_word, uint32_t s2_lo,
                                                      uint32_t o2_lo, uint32_t s2_hi, uint32_t o2_hi, int word,
                                                      const uint32_t (&act)[kTokenBlocks][kActWords],
                                                      float (&acc)[kTokenBlocks][4]) {
  uint32_t lo[4], hi[4];
  dequant_int4_word_scaled(lo_word, s2_lo, o2_lo, lo);
  dequant_int4_word_scaled(hi_word, s2_hi, o2_hi, hi);
  mma_int4_word_pairs<true>(lo, hi, word, act, acc);
}

}  // namespace qgemm::detail::wonly
