// paged_attention_mma.cuh — the decode attention kernel on tensor cores
// (mma.sync m16n8k16, sm_80+), for grouped-query attention: the query heads
// that share a kv head are the 8 columns (N side) of the MMAs, so each cache
// element read feeds up to 8 heads at MMA rate instead of 8 FMAs, and a
// group of 4–8 wastes at most half of each MMA (as the 16 A rows it wasted
// three quarters at a group of 4).
//
// A CTA takes (sequence, kv head, up to 8 · kHeadBlocks of its query heads,
// partition), like paged_attention_kernel.cuh; each of its kWarps warps
// takes groups of 16 tokens (g = warp, warp + kWarps, …) with its own
// running max, sum and output, merged across the warps at the end. Per
// group, g = lane / 4, t = lane % 4:
//
//   Sᵀ = K·Qᵀ  the 16 tokens are the A rows (g, g + 8), the heads the B
//              columns, head_dim / 16 k-steps. The dot product does not care
//              in which order it sums the dims, so k-step kk's operand slots
//              2t, 2t+1, 2t+8, 2t+9 are elements 4kk + 0…3 of lane t's chunk
//              of the token: D/4 elements in 16-byte pieces t, t + 4, … of
//              the head vector (key_dim), so the token's four lanes read 64
//              contiguous bytes per load. Q's B fragments use the same map.
//   softmax    online, per head column (its 16 tokens over the 8 lanes g),
//              in log2 units; logits of tokens past the partition's end are
//              −inf.
//   Oᵀ += Vᵀ·Pᵀ  the dims are the A rows, the tokens the k: dim tile mt's
//              rows g, g + 8 are the dims g·(D/8) + 2mt, + 1, so each lane
//              loads the D/8 contiguous elements at g·(D/8) of its four
//              tokens 2t, 2t+1, 2t+8, 2t+9. Pᵀ's B fragments are Sᵀ's
//              accumulators transposed by movmatrix (a lane's pairs are an
//              8×8 tile in the m8n8 layout), each weight w = p · s_v split
//              as hi + lo in the operand dtype (two MMAs: w to about 2^-17,
//              not the 2^-9 of one bf16).
//
// Operands: codes and 16-bit values are exact in the operand dtype (int8 and
// fp8 e4m3 in bf16 and fp16), Q is the query itself (or 2^e times it), so S
// is the exact dot product summed in fp32; the scales multiply S's rows
// (s_k) and the weights (s_v). QK runs in fp16 for a quantized cache (a bf16
// query scaled by a power of two per head, query_exponent) and in the
// cache's dtype otherwise; PV in bf16 for a quantized cache (its weights
// p · s_v span any range) and in the cache's dtype otherwise.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "core/cuda_launch.cuh"
#include "core/cuda_mma.cuh"
#include "core/numeric.h"
#include "kvcache/cuda/paged_attention_kernel.cuh"

namespace qgemm::detail::attention {

// A 16-bit cache vector is already the MMA operand of its own dtype.
template <CacheKind kKind, bool kBf16>
constexpr bool kOperandDtype = (kKind == CacheKind::kBFloat16 && kBf16) || (kKind == CacheKind::kHalf && !kBf16);

// The words a lane holds of one token's vector: kElems elements, in 16-byte
// pieces kPieceStride bytes apart (16: contiguous). int8 codes are kept
// biased (code + 128 in each byte, XOR 0x80 once per word), the form their
// conversion reads.
template <CacheKind kKind, int kElems, int kPieceStride = 16>
struct LaneVector {
  static constexpr int kBytes = kElems * (kKind == CacheKind::kInt8 || kKind == CacheKind::kFp8 ? 1 : 2);
  static constexpr int kWords = kBytes / 4;
  static constexpr uint32_t kZeroWord = kKind == CacheKind::kInt8 ? 0x80808080u : 0u;  // four zeros
  uint32_t w[kWords];

  __device__ __forceinline__ void load(const void* src) {
    if constexpr (kBytes % 16 == 0) {
#pragma unroll
      for (int i = 0; i < kBytes / 16; ++i) {
        const uint4 v = __ldg(reinterpret_cast<const uint4*>(static_cast<const char*>(src) + i * kPieceStride));
        w[4 * i] = v.x, w[4 * i + 1] = v.y, w[4 * i + 2] = v.z, w[4 * i + 3] = v.w;
      }
    } else {
      static_assert(kBytes == 8, "8-byte or 16-byte multiples");
      const uint2 v = __ldg(static_cast<const uint2*>(src));
      w[0] = v.x, w[1] = v.y;
    }
  }
  // After load: the int8 bias, and zeros where the token is not attended
  // (its loaded vector, from a stand-in slot, may hold anything).
  __device__ __forceinline__ void finish(bool keep) {
#pragma unroll
    for (int i = 0; i < kWords; ++i) {
      if constexpr (kKind == CacheKind::kInt8) w[i] ^= 0x80808080u;
      w[i] = keep ? w[i] : kZeroWord;
    }
  }
  // Element i as a float (exact).
  __device__ __forceinline__ float element(int i) const {
    if constexpr (kKind == CacheKind::kInt8) {
      return __uint_as_float(__byte_perm(w[i / 4], 0x4B000000u, 0x7540 + i % 4)) - 8388736.0f;
    } else if constexpr (kKind == CacheKind::kFp8) {
      const auto code = static_cast<__nv_fp8_storage_t>(w[i / 4] >> (8 * (i % 4)));
      return __half2float(__half(__nv_cvt_fp8_to_halfraw(code, __NV_E4M3)));
    } else if constexpr (kKind == CacheKind::kHalf) {
      return __half2float(__ushort_as_half(static_cast<unsigned short>(w[i / 2] >> (16 * (i % 2)))));
    } else {
      return __uint_as_float(i % 2 == 0 ? w[i / 2] << 16 : w[i / 2] & 0xffff0000u);
    }
  }
  // Elements i, i + 1 (i even) as one operand register of the given dtype.
  template <bool kBf16>
  __device__ __forceinline__ uint32_t pair(int i) const {
    if constexpr (kOperandDtype<kKind, kBf16>) {
      return w[i / 2];
    } else if constexpr (kKind == CacheKind::kInt8 && !kBf16) {
      // fp16 bits 0x64uu are 1024 + u exactly, and u = code + 128 (the
      // biased byte): one PRMT and one HADD2 of −1152 per pair.
      const uint32_t biased = __byte_perm(w[i / 4], 0x64646464u, i % 4 == 0 ? 0x4140 : 0x4342);
      uint32_t codes;
      asm("add.rn.f16x2 %0, %1, %2;\n" : "=r"(codes) : "r"(biased), "r"(0xe480e480u));  // (−1152, −1152)
      return codes;
    } else if constexpr (kKind == CacheKind::kFp8 && !kBf16) {
      const auto codes = static_cast<__nv_fp8x2_storage_t>(w[i / 4] >> (8 * (i % 4)));
      const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(codes, __NV_E4M3);
      return static_cast<uint32_t>(h.x) | static_cast<uint32_t>(h.y) << 16;
    } else {
      return pack_half2<kBf16>(element(i), element(i + 1));
    }
  }
};

// Element i of two tokens' vectors as one operand register (a, b).
template <bool kBf16, CacheKind kKind, int kElems, int kStride>
__device__ __forceinline__ uint32_t token_pair(const LaneVector<kKind, kElems, kStride>& a,
                                               const LaneVector<kKind, kElems, kStride>& b, int i) {
  if constexpr (kOperandDtype<kKind, kBf16>) {
    return __byte_perm(a.w[i / 2], b.w[i / 2], i % 2 == 0 ? 0x5410 : 0x7632);
  } else {
    return pack_half2<kBf16>(a.element(i), b.element(i));
  }
}

// The operand register's two values back as floats.
template <bool kBf16>
__device__ __forceinline__ float2 unpack_half2(uint32_t r) {
  if constexpr (kBf16) {
    return make_float2(__uint_as_float(r << 16), __uint_as_float(r & 0xffff0000u));
  } else {
    return __half22float2(*reinterpret_cast<const __half2*>(&r));
  }
}

// Elements per 16-byte piece of a cache vector.
template <CacheKind kKind>
constexpr int kPieceElems = kKind == CacheKind::kInt8 || kKind == CacheKind::kFp8 ? 16 : 8;
// The dim of element e of lane t's key chunk: its 16-byte pieces are pieces
// t, t + 4, t + 8, … of the head vector, so that the four lanes of a token
// read 64 contiguous bytes per load.
template <CacheKind kKind>
__device__ __forceinline__ int key_dim(int t, int e) {
  constexpr int kPiece = kPieceElems<kKind>;
  return (4 * (e / kPiece) + t) * kPiece + e % kPiece;
}

// QK of a quantized cache runs in fp16 for every query dtype: its codes
// become fp16 in one instruction per element (int8: the magic 1024 + byte,
// fp8: the paired cvt), bf16 costs 2.5. A bf16 query's row is scaled by
// 2^e, e = query_exponent(max |q| of the row), which puts the row's max in
// [2^14, 2^15): every element then converts exactly (8 significant bits,
// normal in fp16) unless it is below 2^-28 of the row's max, where fp16's
// subnormals keep it to 2^-25 absolute — 2^-39 of the largest product, far
// under the fp32 sum's own rounding. The logits take 2^-e back exactly.
__device__ __forceinline__ int query_exponent(float max_abs) {
  if (!(max_abs > 0.0f)) return 0;                            // a zero row
  const int biased = static_cast<int>(__float_as_uint(max_abs) >> 23 & 0xffu);  // floor(log2) + 127
  return min(14 - (biased - 127), 126);  // a subnormal max (biased 0) stays below 2^14
}

// Two 16-bit values of an 8×8 matrix held in the m8n8 fragment layout
// (lane g·4 + t: row g, columns 2t, 2t + 1), transposed: the lane then holds
// row g of the transpose, i.e. column g, rows 2t, 2t + 1 (movmatrix, sm_75+).
__device__ __forceinline__ uint32_t transpose_8x8(uint32_t x) {
  uint32_t y;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(y) : "r"(x));
  return y;
}

// What one lane loads for one group of 16 tokens.
template <CacheKind kKind, int kHeadDim>
struct GroupFetch {
  LaneVector<kKind, kHeadDim / 4, 64> k[2];  // tokens g, g + 8: dims key_dim(t, ·)
  LaneVector<kKind, kHeadDim / 8> v[4];      // tokens 2t, 2t+1, 2t+8, 2t+9: dims g·D/8 …
  float k_scale[2], v_scale[2];              // of the tokens g, g + 8
  bool valid[2];                             // tokens g, g + 8 are before the end
  bool v_valid[4];                           // tokens 2t, 2t+1, 2t+8, 2t+9 are
};

// kHeadBlocks: n-blocks of 8 query heads per CTA (1: groups up to 8, 2: up to 16).
// kMinCtasPerSm: __launch_bounds__'s second argument (register budget). Two:
// up to head_dim 128 ptxas fits every build in it without spills (sm_90a:
// 204 registers for an int8 cache, 220 for bf16, one n-block; at 256, int8
// spills 40 bytes, kPrefetchGroup below); three (≤ 168 registers) was 3 %
// slower for int8 and spilled for fp8 (H200, 32 × 4096 tokens, group 4).
template <CacheKind kKind, DType kDtype, int kHeadDim, int kHeadBlocks, int kMinCtasPerSm = 2>
__global__ void __launch_bounds__(kThreads, kMinCtasPerSm) paged_attention_mma_kernel(Params p) {
  using Vec = CacheVector<kKind>;
  using T = typename FloatAccess<kDtype>::Storage;
  using Fetch = GroupFetch<kKind, kHeadDim>;
  constexpr bool kQkBf16 = !Vec::kScaled && kDtype == DType::kBFloat16;
  constexpr bool kScaledQuery = Vec::kScaled && kDtype == DType::kBFloat16;  // bf16 query in fp16 QK
  constexpr bool kPvBf16 = Vec::kScaled || kKind == CacheKind::kBFloat16;
  constexpr int kNB = kHeadBlocks, kHeads = 8 * kHeadBlocks;
  constexpr int kSteps = kHeadDim / 16, kDimTiles = kHeadDim / 16;
  constexpr int kVElems = kHeadDim / 8;
  constexpr int kElemBytes = Vec::kScaled ? 1 : 2;
  constexpr int kGroup = 16;
  // The next group's loads in flight in registers while this one computes,
  // except at 256 dims for fp8 and 16-bit vectors: there the second group's
  // registers spill (ptxas: 152 / 544 bytes) and cost more than the overlap
  // (H200, 32 × 4096 tokens, 16 over 8 heads: fp8 221 → 196 µs, bf16 650 →
  // 258 without it; int8, 40 bytes of spills, 165 with it, 189 without;
  // bench/results/attention-h200-kernel-experiment.txt, section 11).
  constexpr bool kPrefetchGroup = kHeadDim <= 128 || kKind == CacheKind::kInt8;

  // The warps' outputs, dim g·D/8 + j at slot j·8 + g, rows padded by 4 so
  // that a store's 32 lanes (8 dims × 4 head pairs) hit 32 banks.
  __shared__ float warp_out[kWarps][kHeads][kHeadDim + 4];
  __shared__ float warp_max[kWarps][kHeads], warp_sum[kWarps][kHeads];
  __shared__ int bad_block;

  wait_for_preceding_grids();
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4;
  const int64_t seq = blockIdx.x / (p.kv_heads * p.head_chunks);
  const int kv_head = static_cast<int>(blockIdx.x / p.head_chunks % p.kv_heads);
  const int chunk_of_heads = static_cast<int>(blockIdx.x % p.head_chunks);
  const int first_head = kv_head * p.group + chunk_of_heads * kHeads;
  const int heads = min(kHeads, p.group - chunk_of_heads * kHeads);
  const int partition = blockIdx.y;
  if (threadIdx.x == 0) bad_block = 0;

  const int64_t len = p.seq_lens[seq];
  const bool len_valid = len >= 0 && len <= p.max_blocks * p.block_size;
  const int64_t begin = static_cast<int64_t>(partition) * p.partition_tokens;
  const int64_t end = !len_valid ? 0 : partition == p.partitions - 1 ? len : min(begin + p.partition_tokens, len);
  const int32_t* table = p.block_tables + seq * p.table_stride;

  // Q's B fragments (column g of n-block nb: head 8nb + g; heads past
  // `heads` are zero), and the factors that turn the lane's S columns
  // (heads 8nb + 2t, 2t + 1) into log2-unit logits, before s_k.
  uint32_t qb[kNB][kSteps][2];
  float head_log2[kNB][2];
  {
    float q[kNB][kSteps][2][2];  // [nb][kk][half][element]: dims key_dim(t, 4kk + 2half + element)
    float max_abs[kNB];
#pragma unroll
    for (int nb = 0; nb < kNB; ++nb) {
      const bool head_valid = 8 * nb + g < heads;
      const T* row = static_cast<const T*>(p.query) + seq * p.query_seq_stride +
                     (first_head + (head_valid ? 8 * nb + g : 0)) * p.query_head_stride;
      max_abs[nb] = 0.0f;
#pragma unroll
      for (int kk = 0; kk < kSteps; ++kk) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {  // b0: dims 4kk + 0, 1; b1: 4kk + 2, 3
          const T* src = row + key_dim<kKind>(t, 4 * kk + 2 * half);  // and the next dim
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            q[nb][kk][half][e] = head_valid ? FloatAccess<kDtype>::load(src + e) : 0.0f;
            max_abs[nb] = fmaxf(max_abs[nb], fabsf(q[nb][kk][half][e]));
          }
        }
      }
    }
#pragma unroll
    for (int nb = 0; nb < kNB; ++nb) {
      int exponent = 0;
      if constexpr (kScaledQuery) {  // the head's max over its four lanes
        max_abs[nb] = fmaxf(max_abs[nb], __shfl_xor_sync(0xffffffffu, max_abs[nb], 1));
        max_abs[nb] = fmaxf(max_abs[nb], __shfl_xor_sync(0xffffffffu, max_abs[nb], 2));
        exponent = query_exponent(max_abs[nb]);
      }
      const float scale = numeric::pow2i(exponent);
#pragma unroll
      for (int kk = 0; kk < kSteps; ++kk) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          qb[nb][kk][half] = pack_half2<kQkBf16>(q[nb][kk][half][0] * scale, q[nb][kk][half][1] * scale);
        }
      }
#pragma unroll
      for (int e = 0; e < 2; ++e) {  // head 8nb + 2t + e's exponent, from its lanes (g = 2t + e)
        head_log2[nb][e] = p.scale_log2 * numeric::pow2i(-__shfl_sync(0xffffffffu, exponent, 4 * (2 * t + e)));
      }
    }
  }

  // This lane's part of slot 0's vectors; slot s's is s · slot_bytes further.
  const int32_t slot_bytes = static_cast<int32_t>(p.kv_heads * kHeadDim * kElemBytes);
  const int64_t head_base = static_cast<int64_t>(kv_head) * kHeadDim;
  const char* key_lane = static_cast<const char*>(p.key) + (head_base + t * kPieceElems<kKind>) * kElemBytes;
  const char* value_lane = static_cast<const char*>(p.value) + (head_base + g * kVElems) * kElemBytes;
  const int32_t kv_heads = static_cast<int32_t>(p.kv_heads);

  // The slot of token group_begin + lane % 16 (−1: past the end or a bad
  // block id): each token's table entry is read once per warp, one group
  // ahead of its fetch, and handed to the lanes that load it by shuffles.
  auto lane_slot = [&](int64_t group_begin) -> int32_t {
    const int64_t j = group_begin + lane % kGroup;
    if (j >= end) return -1;
    const int32_t slot = kv::token_slot(table, static_cast<uint32_t>(j), p.block_size, p.num_blocks);
    if (slot < 0) bad_block = 1;
    return slot;
  };
  // Without branches: a token not attended loads slot 0 (any slot is
  // memory of the pool) and its values are replaced after the load — its
  // logit by −inf, its values and scales by zeros.
  auto fetch = [&](int32_t slots_of_group, Fetch& f) {
#pragma unroll
    for (int b = 0; b < 2; ++b) {
      const int32_t slot = __shfl_sync(0xffffffffu, slots_of_group, g + 8 * b);
      const int32_t safe = max(slot, 0);
      f.k[b].load(key_lane + static_cast<int64_t>(safe) * slot_bytes);
      if constexpr (Vec::kScaled) {
        f.k_scale[b] = __ldg(p.key_scale + safe * kv_heads + kv_head);
        f.v_scale[b] = __ldg(p.value_scale + safe * kv_heads + kv_head);
      }
      f.valid[b] = slot >= 0;
    }
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int32_t slot = __shfl_sync(0xffffffffu, slots_of_group, 2 * t + (c % 2) + 8 * (c / 2));
      f.v[c].load(value_lane + static_cast<int64_t>(max(slot, 0)) * slot_bytes);
      f.v_valid[c] = slot >= 0;
    }
  };
  // When the group's turn comes (not at the fetch, which would wait for the
  // loads): the int8 bias, zeros for the tokens not attended.
  auto prepare = [&](Fetch& f) {
#pragma unroll
    for (int b = 0; b < 2; ++b) {
      f.k[b].finish(true);  // their logits are masked instead
      if constexpr (Vec::kScaled) {
        f.v_scale[b] = f.valid[b] ? f.v_scale[b] : 0.0f;
      } else {
        f.k_scale[b] = 1.0f;
        f.v_scale[b] = f.valid[b] ? 1.0f : 0.0f;
      }
    }
#pragma unroll
    for (int c = 0; c < 4; ++c) f.v[c].finish(f.v_valid[c]);
  };

  // Per head column e (head 8nb + 2t + e): running max (the same in the 8
  // lanes of a column), this lane's part of the sum (its tokens g, g + 8).
  float row_max[kNB][2], row_sum[kNB][2];
  float out[kNB][kDimTiles][4];  // Oᵀ: rows dims g·D/8 + 2mt (+1), columns heads 2t, 2t + 1
#pragma unroll
  for (int nb = 0; nb < kNB; ++nb) {
    row_max[nb][0] = row_max[nb][1] = -INFINITY;
    row_sum[nb][0] = row_sum[nb][1] = 0.0f;
#pragma unroll
    for (int mt = 0; mt < kDimTiles; ++mt) out[nb][mt][0] = out[nb][mt][1] = out[nb][mt][2] = out[nb][mt][3] = 0.0f;
  }

  const int64_t first_group = begin + static_cast<int64_t>(warp) * kGroup;
  constexpr int64_t kGroupStride = static_cast<int64_t>(kWarps) * kGroup;
  __syncthreads();  // bad_block's reset before any fetch can set it
  auto attend_group = [&](Fetch& current) {
    prepare(current);

    // Sᵀ = K·Qᵀ: rows tokens g, g + 8; columns heads 2t, 2t + 1 of n-block nb.
    float s[kNB][4];
#pragma unroll
    for (int nb = 0; nb < kNB; ++nb) s[nb][0] = s[nb][1] = s[nb][2] = s[nb][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) {
      const uint32_t ka[4] = {current.k[0].template pair<kQkBf16>(4 * kk), current.k[1].template pair<kQkBf16>(4 * kk),
                              current.k[0].template pair<kQkBf16>(4 * kk + 2),
                              current.k[1].template pair<kQkBf16>(4 * kk + 2)};
#pragma unroll
      for (int nb = 0; nb < kNB; ++nb) mma_m16n8k16<kQkBf16>(s[nb], ka, qb[nb][kk]);
    }
    // Logits in log2 units; s[nb][2r + e] is token g + 8r, head column e.
    float rescale[kNB][2];
    bool any_rescale = false;
#pragma unroll
    for (int nb = 0; nb < kNB; ++nb) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float chunk_max = -INFINITY;
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          float& x = s[nb][2 * r + e];
          x = current.valid[r] ? x * (current.k_scale[r] * head_log2[nb][e]) : -INFINITY;
          chunk_max = fmaxf(chunk_max, x);
        }
#pragma unroll
        for (int mask = 4; mask < 32; mask *= 2) {  // the column's 16 tokens: over g
          chunk_max = fmaxf(chunk_max, __shfl_xor_sync(0xffffffffu, chunk_max, mask));
        }
        const float new_max = fmaxf(row_max[nb][e], chunk_max);
        // Nothing seen yet in this column (new_max = −inf): keep 0 · 1.
        rescale[nb][e] = new_max == -INFINITY ? 1.0f : exp2f(row_max[nb][e] - new_max);
        any_rescale |= rescale[nb][e] != 1.0f;
        row_max[nb][e] = new_max;
        row_sum[nb][e] *= rescale[nb][e];
      }
    }
    // Once the columns' maxima settle, most groups leave them as they are.
    if (__any_sync(0xffffffffu, any_rescale)) {
#pragma unroll
      for (int nb = 0; nb < kNB; ++nb) {
#pragma unroll
        for (int mt = 0; mt < kDimTiles; ++mt) {
          out[nb][mt][0] *= rescale[nb][0], out[nb][mt][1] *= rescale[nb][1];
          out[nb][mt][2] *= rescale[nb][0], out[nb][mt][3] *= rescale[nb][1];
        }
      }
    }
    // Pᵀ's B fragments (weights p · s_v, hi and lo): the lane's pairs (token
    // g + 8r; heads 2t, 2t + 1) are an 8×8 tile in the m8n8 layout, and its
    // transpose holds (tokens 8r + 2t, 2t + 1; head g) — b0 (r = 0), b1 (r = 1).
    uint32_t p_hi[kNB][2], p_lo[kNB][2];
#pragma unroll
    for (int nb = 0; nb < kNB; ++nb) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float w[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float prob = row_max[nb][e] == -INFINITY ? 0.0f : exp2f(s[nb][2 * r + e] - row_max[nb][e]);
          row_sum[nb][e] += prob;
          w[e] = prob * current.v_scale[r];
        }
        const uint32_t hi = pack_half2<kPvBf16>(w[0], w[1]);
        const float2 back = unpack_half2<kPvBf16>(hi);
        p_hi[nb][r] = transpose_8x8(hi);
        p_lo[nb][r] = transpose_8x8(pack_half2<kPvBf16>(w[0] - back.x, w[1] - back.y));
      }
    }
    // Oᵀ += Vᵀ·Pᵀ over the 16 tokens: A rows g, g + 8 of dim tile mt are the
    // dims g·D/8 + 2mt, + 1 (the lane's own loads), its k the tokens.
#pragma unroll
    for (int mt = 0; mt < kDimTiles; ++mt) {
      const uint32_t va[4] = {token_pair<kPvBf16>(current.v[0], current.v[1], 2 * mt),
                              token_pair<kPvBf16>(current.v[0], current.v[1], 2 * mt + 1),
                              token_pair<kPvBf16>(current.v[2], current.v[3], 2 * mt),
                              token_pair<kPvBf16>(current.v[2], current.v[3], 2 * mt + 1)};
#pragma unroll
      for (int nb = 0; nb < kNB; ++nb) {
        mma_m16n8k16<kPvBf16>(out[nb][mt], va, p_hi[nb]);
        mma_m16n8k16<kPvBf16>(out[nb][mt], va, p_lo[nb]);
      }
    }
  };
  if constexpr (kPrefetchGroup) {
    // Group i's data is loaded during group i − 1, its slots during group i − 2.
    Fetch current;
    if (first_group < end) fetch(lane_slot(first_group), current);
    int32_t next_slots = lane_slot(first_group + kGroupStride);
    for (int64_t group_begin = first_group; group_begin < end; group_begin += kGroupStride) {
      Fetch next;
      if (group_begin + kGroupStride < end) fetch(next_slots, next);
      next_slots = lane_slot(group_begin + 2 * kGroupStride);
      attend_group(current);
      current = next;
    }
  } else {
    // Each group's data loaded at its turn (its slots one group ahead).
    int32_t slots = lane_slot(first_group);
    for (int64_t group_begin = first_group; group_begin < end; group_begin += kGroupStride) {
      Fetch current;
      fetch(slots, current);
      slots = lane_slot(group_begin + kGroupStride);
      attend_group(current);
    }
  }
  allow_dependent_launch();

  // The warp's columns: sums over the 8 lanes of a column; outputs to shared memory.
#pragma unroll
  for (int nb = 0; nb < kNB; ++nb) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
#pragma unroll
      for (int mask = 4; mask < 32; mask *= 2) row_sum[nb][e] += __shfl_xor_sync(0xffffffffu, row_sum[nb][e], mask);
      if (g == 0) {
        warp_max[warp][8 * nb + 2 * t + e] = row_max[nb][e];
        warp_sum[warp][8 * nb + 2 * t + e] = row_sum[nb][e];
      }
    }
#pragma unroll
    for (int mt = 0; mt < kDimTiles; ++mt) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {  // dim g·D/8 + 2mt + i/2, head 8nb + 2t + i%2
        warp_out[warp][8 * nb + 2 * t + i % 2][(2 * mt + i / 2) * 8 + g] = out[nb][mt][i];
      }
    }
  }
  __syncthreads();

  // Merge the warps: M = max m_w, sum = Σ sum_w·2^(m_w − M), acc likewise.
  const bool bad = !len_valid || bad_block != 0;
  for (int idx = threadIdx.x; idx < heads * kHeadDim; idx += kThreads) {
    const int h = idx / kHeadDim, d = idx % kHeadDim, slot = d % kVElems * 8 + d / kVElems;
    float merged_max = -INFINITY;
#pragma unroll
    for (int wi = 0; wi < kWarps; ++wi) merged_max = fmaxf(merged_max, warp_max[wi][h]);
    float sum = 0.0f, total = 0.0f;
#pragma unroll
    for (int wi = 0; wi < kWarps; ++wi) {
      const float factor = warp_max[wi][h] == -INFINITY ? 0.0f : exp2f(warp_max[wi][h] - merged_max);
      sum += warp_sum[wi][h] * factor;
      total += warp_out[wi][h][slot] * factor;
    }
    store_head_result<kDtype, kHeadDim>(p, seq, first_head + h, partition, d, total, merged_max, sum, bad);
  }
}

}  // namespace qgemm::detail::attention
