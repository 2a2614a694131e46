// wonly_device.cuh — device building blocks of the weight-only kernels:
// register dequantization of int4 / int8 words into packed bf16x2 / f16x2
// pairs with the paired 16-bit FMA (ŵ = round_T(q·s_T + o_T), bit-identical
// to wonly_math.h), the MMA steps of a lane's weight chunk, and the output
// store. The m16n8k16 MMA and pack_half2 are core/cuda_mma.cuh's.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "core/cuda_mma.cuh"
#include "core/numeric.h"
#include "wonly/wonly_args.h"

namespace qgemm::detail::wonly {

// (v_T, v_T): a scale or offset rounded to T once (wonly_math.h's s_T, o_T),
// in both halves of the register the paired FMA reads. One F2FP.
template <bool kBf16>
__device__ __forceinline__ uint32_t param2(float v) {
  return pack_half2<kBf16>(v, v);
}

// d = round_T(a·b + c) on both halves, rounded once (HFMA2; subnormals kept).
template <bool kBf16>
__device__ __forceinline__ uint32_t fma2(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  if constexpr (kBf16) {
    asm("fma.rn.bf16x2 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  } else {
    asm("fma.rn.f16x2 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  }
  return d;
}

// The magic-number trick on 16-bit halves: the T value whose bits are
// magic | u is bias + u exactly (bf16 0x4300 | u = 128 + u for u < 128,
// fp16 0x6400 | u = 1024 + u for u < 1024); fma(v, 1, −bias) = u exactly.
// The bias is removed on its own, never folded into the offset (that would
// change the rounding of q·s_T + o_T).
template <bool kBf16>
struct Magic {
  static constexpr uint32_t kBytes = kBf16 ? 0x43434343u : 0x64646464u;  // PRMT source
  static constexpr uint32_t kOne2 = kBf16 ? 0x3f803f80u : 0x3c003c00u;   // (1, 1)
  static constexpr uint32_t kNegBias2 = kBf16 ? 0xc300c300u : 0xe400e400u;  // (−128, −128) / (−1024, −1024)
};

// Eight int4 elements (one 32-bit word; element e in bits 4e…4e+3) →
// four pairs (e0,e1), (e2,e3), (e4,e5), (e6,e7) of ŵ = round_T(q·s_T + o_T),
// s2 = (s_T, s_T), o2 = (o_T, o_T). 2 LOP + 1 SHF + 6 PRMT + 8 HFMA2.
template <bool kBf16>
__device__ __forceinline__ void dequant_int4_word(uint32_t word, uint32_t s2, uint32_t o2,
                                                  uint32_t pairs[4]) {
  using M = Magic<kBf16>;
  const uint32_t even = word & 0x0f0f0f0fu;        // bytes: e0 e2 e4 e6
  const uint32_t odd = (word >> 4) & 0x0f0f0f0fu;  // bytes: e1 e3 e5 e7
  const uint32_t lo = __byte_perm(even, odd, 0x5140);  // bytes: e0 e1 e2 e3
  const uint32_t hi = __byte_perm(even, odd, 0x7362);  // bytes: e4 e5 e6 e7
  const uint32_t v[4] = {__byte_perm(lo, M::kBytes, 0x4140), __byte_perm(lo, M::kBytes, 0x4342),
                         __byte_perm(hi, M::kBytes, 0x4140), __byte_perm(hi, M::kBytes, 0x4342)};
#pragma unroll
  for (int p = 0; p < 4; ++p) pairs[p] = fma2<kBf16>(fma2<kBf16>(v[p], M::kOne2, M::kNegBias2), s2, o2);
}

// Four int8 elements (byte e = element e, signed) → pairs (e0,e1), (e2,e3).
// fp16: the 16-bit magic holds 1024 + (q + 128) exactly. bf16 has 8
// significant bits, too few for the magic 128 + (q + 128), so the byte is
// split: its low 7 bits through the magic, 0x4300 | low7 = 128 + low7, and its
// sign bit into the bias, 0x4300 | (byte & 0x80) = 128 or 256; then
// q = (128 + low7) − (128 + 128·sign) exactly (an integer in −128…127), one
// HFMA2 per pair. 2 LOP3 + 4 PRMT + 2 HFMA2 per 4 elements before the
// scaling, where the former fp32 magic (2^23 + (q + 128), FADD, F2FP pack)
// took 1 LOP3 + 4 PRMT + 4 FADD + 2 F2FP.
template <bool kBf16>
__device__ __forceinline__ void dequant_int8_word(uint32_t word, uint32_t s2, uint32_t o2,
                                                  uint32_t pairs[2]) {
  if constexpr (kBf16) {
    using M = Magic<true>;
    constexpr uint32_t kNegOne2 = 0xbf80bf80u;  // (−1, −1)
    const uint32_t low7 = word & 0x7f7f7f7fu, sign = word & 0x80808080u;
#pragma unroll
    for (int b = 0; b < 2; ++b) {
      const uint32_t sel = b == 0 ? 0x4140u : 0x4342u;  // bytes 2b, 2b+1 under 0x43
      const uint32_t q = fma2<true>(__byte_perm(sign, M::kBytes, sel), kNegOne2, __byte_perm(low7, M::kBytes, sel));
      pairs[b] = fma2<true>(q, s2, o2);
    }
  } else {
    const uint32_t biased = word ^ 0x80808080u;  // q + 128 in every byte
    using M = Magic<false>;
    constexpr uint32_t kNeg1152 = 0xe480e480u;  // (−1152, −1152) = −(1024 + 128)
    pairs[0] = fma2<false>(fma2<false>(__byte_perm(biased, M::kBytes, 0x4140), M::kOne2, kNeg1152), s2, o2);
    pairs[1] = fma2<false>(fma2<false>(__byte_perm(biased, M::kBytes, 0x4342), M::kOne2, kNeg1152), s2, o2);
  }
}

// The MMAs of one int4 word of a lane's chunk: its 8 elements, dequantized
// into pairs lo (row g) and hi (row g + 8), are MMA steps 2·word (pairs 0,
// 1) and 2·word + 1 (pairs 2, 3), times the lane's activations of token g of
// each n8 block (act[b]: two elements per word), into acc[b].
template <bool kBf16, int kTokenBlocks, int kActWords>
__device__ __forceinline__ void mma_int4_word_pairs(const uint32_t (&lo)[4], const uint32_t (&hi)[4], int word,
                                                    const uint32_t (&act)[kTokenBlocks][kActWords],
                                                    float (&acc)[kTokenBlocks][4]) {
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int step = 2 * word + half;
    const uint32_t a[4] = {lo[2 * half], hi[2 * half], lo[2 * half + 1], hi[2 * half + 1]};
#pragma unroll
    for (int b = 0; b < kTokenBlocks; ++b) {
      const uint32_t bf[2] = {act[b][2 * step], act[b][2 * step + 1]};
      mma_m16n8k16<kBf16>(acc[b], a, bf);
    }
  }
}

// The decode kernels' MMA step (wonly_gemv.cu, wonly_stream_sm90.cu): word
// `word` of a lane's 16-byte chunk of weight rows g (lo_word) and g + 8
// (hi_word), dequantized with their (s_T, s_T), (o_T, o_T) pairs, times the
// lane's activations of token g of each n8 block (act[b]: the same chunk's
// elements, two per word), into acc[b]. The MMA's k slots {2t, 2t+1, 2t+8,
// 2t+9} of lane t take elements 4·step … 4·step + 3 of the lane's own chunk —
// any k order works if A and B agree.
template <bool kBf16, bool kInt4, int kTokenBlocks, int kActWords>
__device__ __forceinline__ void mma_chunk_word(uint32_t lo_word, uint32_t hi_word, uint32_t s2_lo, uint32_t o2_lo,
                                               uint32_t s2_hi, uint32_t o2_hi, int word,
                                               const uint32_t (&act)[kTokenBlocks][kActWords],
                                               float (&acc)[kTokenBlocks][4]) {
  if constexpr (kInt4) {
    uint32_t lo[4], hi[4];
    dequant_int4_word<kBf16>(lo_word, s2_lo, o2_lo, lo);
    dequant_int4_word<kBf16>(hi_word, s2_hi, o2_hi, hi);
    mma_int4_word_pairs<kBf16>(lo, hi, word, act, acc);
  } else {
    // 4 elements per word = MMA step `word`.
    uint32_t lo[2], hi[2];
    dequant_int8_word<kBf16>(lo_word, s2_lo, o2_lo, lo);
    dequant_int8_word<kBf16>(hi_word, s2_hi, o2_hi, hi);
    const uint32_t a[4] = {lo[0], hi[0], lo[1], hi[1]};
#pragma unroll
    for (int b = 0; b < kTokenBlocks; ++b) {
      const uint32_t bf[2] = {act[b][2 * word], act[b][2 * word + 1]};
      mma_m16n8k16<kBf16>(acc[b], a, bf);
    }
  }
}

// The group of 16-byte chunk c (E = 32 int4 / 16 int8 elements) is
// c >> chunk_group_shift: group sizes are powers of two ≥ 32 ≥ E, or K (per
// channel: group 0 for every chunk).
template <bool kInt4>
__device__ __forceinline__ int chunk_group_shift(const WeightOnlyArgs& args) {
  constexpr int kElems = kInt4 ? 32 : 16;
  return args.group_size == args.k ? 31 : __ffs(static_cast<int>(args.group_size / kElems)) - 1;
}

// A 16-bit T value's bits as a float (exact; one instruction).
template <bool kBf16>
__device__ __forceinline__ float half_bits_to_float(uint32_t bits) {
  if constexpr (kBf16) return __uint_as_float(bits << 16);
  return __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
}

// One scale or offset (WeightOnlyArgs::param on the device): fp32, or the
// bits of a 16-bit T.
template <bool kBf16>
__device__ __forceinline__ float load_param(const float* p) {
  return __ldg(p);
}
template <bool kBf16>
__device__ __forceinline__ float load_param(const uint16_t* p) {
  return half_bits_to_float<kBf16>(__ldg(reinterpret_cast<const unsigned short*>(p)));
}

template <bool kBf16>
__device__ __forceinline__ float load_act(const void* base, int64_t index) {
  const uint16_t bits = static_cast<const uint16_t*>(base)[index];
  return kBf16 ? numeric::bf16_bits_to_float(bits) : numeric::fp16_bits_to_float(bits);
}

// The bits of round_T(acc + bias) (wonly_math.h's epilogue); no addition
// without a bias (−0 stays −0).
template <bool kBf16>
__device__ __forceinline__ uint16_t output_bits(float acc, bool has_bias, float bias) {
  if (has_bias) acc = __fadd_rn(acc, bias);
  return kBf16 ? numeric::float_to_bf16_bits(acc) : numeric::float_to_fp16_bits(acc);
}

// out[token, col] = round_T(acc + bias[col]).
template <bool kBf16>
__device__ __forceinline__ void store_output(const WeightOnlyArgs& args, int64_t token,
                                             int64_t col, float acc) {
  const bool has_bias = args.bias != nullptr;
  static_cast<uint16_t*>(args.out)[token * args.ldo + col] =
      output_bits<kBf16>(acc, has_bias, has_bias ? load_act<kBf16>(args.bias, col) : 0.0f);
}

}  // namespace qgemm::detail::wonly
