// paged_attention_kernel.cuh — the decode attention kernel over the paged
// cache (qgemm/kv_cache.h), on CUDA cores.
//
// A CTA of kWarps warps takes one sequence s, one kv head g, up to kTile of
// the query heads that read g (grouped-query attention: the cache is read
// once for all of them), and one partition of the sequence's tokens (all of
// them without a split). Its tokens go by in chunks of kChunk, each chunk's
// slots first read once into shared memory (kv::token_slot):
//
//   phase 1  logits: lane l of a warp holds dims [8·(l % kLanes), +8) of
//            token (l / kLanes) — kLanes = head_dim / 8 lanes per token, a
//            warp takes 32 / kLanes tokens at once, kUnroll steps of loads in
//            flight; the kTile partial dot products are summed over the
//            token's lanes by a transposing butterfly (reduce_heads);
//   softmax  per query head, online: the chunk's max m', p = 2^(logit − m'),
//            the running sum and output rescaled by 2^(m − m') (logits are
//            in log2 units: q is scaled by softmax_scale · log2 e up front);
//   phase 2  out += p · v̂ with the same lane layout, each lane accumulating
//            its 8 dims over its tokens.
//
// At the end the lanes of a dim slice, then the warps, are summed; the CTA
// writes out = acc / sum (one partition) or its acc, max and sum to the
// workspace for paged_attention_combine_kernel. A quantized cache's scale
// multiplies the token's dot product (k) or its probability (v), so codes
// are widened to fp32 and never scaled element by element.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "core/cuda_launch.cuh"
#include "kvcache/kv_cache_args.h"
#include "kvcache/kv_cache_math.h"
#include "quant/cuda/float_access.cuh"

namespace qgemm::detail::attention {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kChunk = 256;  // tokens whose logits are in shared memory at once
constexpr int kUnroll = 4;   // loads in flight per lane
constexpr int kDimsPerLane = 8;

// What the kernel reads; the cache's element type is a template argument.
struct Params {
  const void* query;
  int64_t query_seq_stride, query_head_stride;
  void* out;
  int64_t out_seq_stride, out_head_stride;
  const void* key;
  const void* value;
  const float* key_scale;  // null: a 16-bit cache
  const float* value_scale;
  uint32_t num_blocks, block_size;  // num_blocks · block_size < 2^31 (paged_attention_cuda checks)
  int64_t kv_heads;
  const int32_t* block_tables;
  int64_t table_stride, max_blocks;
  const int32_t* seq_lens;
  float scale_log2;  // softmax_scale · log2(e)
  int q_heads, group, head_chunks, partitions;
  int64_t partition_tokens;  // the last partition also takes every token past partitions · partition_tokens
  float* ws_acc;  // [S, q_heads, partitions, head_dim] (partitions > 1)
  float* ws_stats;  // [S, q_heads, partitions, 2]: max (log2 units), sum
};

// The cache element types: 8 dims per lane are 8 bytes (uint2) of int8 /
// fp8 codes or 16 bytes (uint4) of fp16 / bf16 values.
enum class CacheKind { kInt8, kFp8, kHalf, kBFloat16 };

template <CacheKind kKind>
struct CacheVector {
  using Raw = uint2;
  static constexpr bool kScaled = true;
};
template <>
struct CacheVector<CacheKind::kHalf> {
  using Raw = uint4;
  static constexpr bool kScaled = false;
};
template <>
struct CacheVector<CacheKind::kBFloat16> {
  using Raw = uint4;
  static constexpr bool kScaled = false;
};

// Four int8 codes (one 32-bit word) to exact floats: the code's bits, sign
// flipped, in the low mantissa of 2^23 (PRMT), minus 2^23 + 128 (FADD) —
// two ALU operations instead of the quarter-rate I2F.
__device__ __forceinline__ void int8x4_to_float(uint32_t word, float* f) {
  const uint32_t biased = word ^ 0x80808080u;
#pragma unroll
  for (int i = 0; i < 4; ++i) f[i] = __uint_as_float(__byte_perm(biased, 0x4B000000u, 0x7540 + i)) - 8388736.0f;
}

template <CacheKind kKind>
__device__ __forceinline__ void widen(const typename CacheVector<kKind>::Raw& raw, float (&f)[kDimsPerLane]) {
  if constexpr (kKind == CacheKind::kInt8) {
    int8x4_to_float(raw.x, f);
    int8x4_to_float(raw.y, f + 4);
  } else if constexpr (kKind == CacheKind::kFp8) {
    const uint32_t words[2] = {raw.x, raw.y};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const auto pair = static_cast<__nv_fp8x2_storage_t>(words[i / 2] >> (16 * (i % 2)));
      const __half2 h = __half2(__nv_cvt_fp8x2_to_halfraw2(pair, __NV_E4M3));
      const float2 v = __half22float2(h);
      f[2 * i] = v.x;
      f[2 * i + 1] = v.y;
    }
  } else if constexpr (kKind == CacheKind::kHalf) {
    const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 v = __half22float2(*reinterpret_cast<const __half2*>(&words[i]));
      f[2 * i] = v.x;
      f[2 * i + 1] = v.y;
    }
  } else {
    const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      f[2 * i] = __uint_as_float(words[i] << 16);
      f[2 * i + 1] = __uint_as_float(words[i] & 0xffff0000u);
    }
  }
}

// Sums v[0..kTile) over the kLanes lanes of a token (aligned groups of
// consecutive lanes). Each butterfly step keeps half of the values a lane
// still holds and sends the other half: kTile − 1 shuffles for kTile values
// instead of kTile · log2(kLanes). Returns the total of value head_of_lane(sub).
template <int kTile, int kLanes>
__device__ __forceinline__ float reduce_heads(float (&v)[kTile], int lane) {
  int count = kTile;
#pragma unroll
  for (int offset = kLanes / 2; offset >= 1; offset /= 2) {
    if (count > 1) {
      const int half = count / 2;
      const bool upper = (lane & offset) != 0;
#pragma unroll
      for (int i = 0; i < kTile / 2; ++i) {
        if (i < half) {
          const float send = upper ? v[i] : v[i + half];
          const float keep = upper ? v[i + half] : v[i];
          v[i] = keep + __shfl_xor_sync(0xffffffffu, send, offset);
        }
      }
      count = half;
    } else {
      v[0] += __shfl_xor_sync(0xffffffffu, v[0], offset);
    }
  }
  return v[0];
}
// Which value reduce_heads leaves in the lane at `sub` of its token: the
// upper half at each step whose lane bit is set.
template <int kTile, int kLanes>
__device__ __forceinline__ int head_of_lane(int sub) {
  int head = 0, count = kTile;
#pragma unroll
  for (int offset = kLanes / 2; offset >= 1; offset /= 2) {
    if (count > 1) {
      count /= 2;
      if (sub & offset) head += count;
    }
  }
  return head;
}
// The lane that writes value `head_of_lane` (the others hold copies).
template <int kTile, int kLanes>
__device__ __forceinline__ bool writes_head(int sub) {
  int count = kTile, copies_mask = 0;
#pragma unroll
  for (int offset = kLanes / 2; offset >= 1; offset /= 2) {
    if (count > 1) count /= 2;
    else copies_mask |= offset;
  }
  return (sub & copies_mask) == 0;
}

// Dim d of query head `head`, once a CTA's warps are merged (both attention
// kernels): with one partition the output itself, total / sum (L = 0 gives
// 0: sum 0, total 0; a bad sequence NaN); else the partition's unnormalized
// total and, once per head, its (max, sum) for the combine kernel. max_logit
// and sum are references so that shared-memory operands are read only on the
// branch that uses them.
template <DType kDtype, int kHeadDim>
__device__ __forceinline__ void store_head_result(const Params& p, int64_t seq, int head, int partition, int d,
                                                  float total, const float& max_logit, const float& sum, bool bad) {
  if (p.partitions == 1) {
    const float value = bad ? NAN : sum > 0.0f ? total / sum : 0.0f;
    static_cast<typename FloatAccess<kDtype>::Storage*>(p.out)[seq * p.out_seq_stride + head * p.out_head_stride + d] =
        FloatAccess<kDtype>::from_float(value);
  } else {
    const int64_t at = (seq * p.q_heads + head) * p.partitions + partition;
    p.ws_acc[at * kHeadDim + d] = bad ? NAN : total;
    if (d == 0) {
      p.ws_stats[2 * at] = max_logit;
      p.ws_stats[2 * at + 1] = bad ? NAN : sum;
    }
  }
}

template <CacheKind kKind, DType kDtype, int kHeadDim, int kTile>
__global__ void __launch_bounds__(kThreads) paged_attention_kernel(Params p) {
  using Vec = CacheVector<kKind>;
  using Raw = typename Vec::Raw;
  using T = typename FloatAccess<kDtype>::Storage;
  constexpr int kLanes = kHeadDim / kDimsPerLane;       // lanes per token
  constexpr int kTokensPerWarp = 32 / kLanes;
  constexpr int kTokensPerStep = kWarps * kTokensPerWarp;
  constexpr int kElemBytes = sizeof(Raw) / kDimsPerLane;
  static_assert(kLanes >= 8 && kLanes <= 32, "head_dim 64, 128 or 256");

  // Logits of the chunk, then (after the loop) the warps' partial outputs.
  constexpr int kLogitFloats = kTile * kChunk, kReduceFloats = kWarps * kTile * kHeadDim;
  __shared__ float shared[kLogitFloats > kReduceFloats ? kLogitFloats : kReduceFloats];
  __shared__ float running_max[kTile], running_sum[kTile], rescale[kTile];
  __shared__ int32_t chunk_slots[kChunk];  // the chunk's token slots, −1 for a bad block id
  __shared__ int bad_block;

  wait_for_preceding_grids();
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int sub = lane % kLanes, token_in_warp = lane / kLanes;
  const int64_t seq = blockIdx.x / (p.kv_heads * p.head_chunks);
  const int kv_head = static_cast<int>(blockIdx.x / p.head_chunks % p.kv_heads);
  const int chunk_of_heads = static_cast<int>(blockIdx.x % p.head_chunks);
  const int first_head = kv_head * p.group + chunk_of_heads * kTile;
  const int heads = min(kTile, p.group - chunk_of_heads * kTile);
  const int partition = blockIdx.y;

  const int64_t len = p.seq_lens[seq];
  const bool len_valid = len >= 0 && len <= p.max_blocks * p.block_size;
  const int64_t begin = static_cast<int64_t>(partition) * p.partition_tokens;
  const int64_t end = !len_valid ? 0 : partition == p.partitions - 1 ? len : min(begin + p.partition_tokens, len);
  const int32_t* table = p.block_tables + seq * p.table_stride;

  if (threadIdx.x < kTile) {
    running_max[threadIdx.x] = -INFINITY;
    running_sum[threadIdx.x] = 0.0f;
  }
  if (threadIdx.x == 0) bad_block = 0;

  // The lane's 8 dims of each query head, in log2 units.
  float q[kTile][kDimsPerLane];
#pragma unroll
  for (int h = 0; h < kTile; ++h) {
    const T* src = static_cast<const T*>(p.query) + seq * p.query_seq_stride +
                   (first_head + min(h, heads - 1)) * p.query_head_stride + sub * kDimsPerLane;
#pragma unroll
    for (int e = 0; e < kDimsPerLane; ++e) q[h][e] = FloatAccess<kDtype>::load(src + e) * p.scale_log2;
  }
  float acc[kTile][kDimsPerLane] = {};
  __syncthreads();

  const int64_t head_offset = static_cast<int64_t>(kv_head) * kHeadDim + sub * kDimsPerLane;

  for (int64_t chunk = begin; chunk < end; chunk += kChunk) {
    const int n = static_cast<int>(end - chunk < kChunk ? end - chunk : kChunk);
    float* logits = shared;
    for (int i = threadIdx.x; i < n; i += kThreads) {
      const int32_t slot = kv::token_slot(table, static_cast<uint32_t>(chunk + i), p.block_size, p.num_blocks);
      chunk_slots[i] = slot;
      if (slot < 0) bad_block = 1;
    }
    __syncthreads();

    // Phase 1: logits[h][i] of the chunk's tokens i.
    // `base` is the same for the whole warp (the shuffles need every lane).
    for (int base = warp * kTokensPerWarp; base < n; base += kTokensPerStep * kUnroll) {
      Raw raw[kUnroll];
      float scale[kUnroll];
      int64_t slots[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int i = base + u * kTokensPerStep + token_in_warp;
        slots[u] = i < n ? chunk_slots[i] : -1;
        raw[u] = Raw{};
        scale[u] = 1.0f;
        if (slots[u] >= 0) {
          const int64_t at = slots[u] * p.kv_heads * kHeadDim + head_offset;
          raw[u] = __ldg(reinterpret_cast<const Raw*>(static_cast<const char*>(p.key) + at * kElemBytes));
          if constexpr (Vec::kScaled) scale[u] = __ldg(p.key_scale + slots[u] * p.kv_heads + kv_head);
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (base + u * kTokensPerStep >= n) break;  // the whole warp is past the chunk
        const int i = base + u * kTokensPerStep + token_in_warp;
        float k[kDimsPerLane];
        widen<kKind>(raw[u], k);
        float dot[kTile];
#pragma unroll
        for (int h = 0; h < kTile; ++h) {
          dot[h] = 0.0f;
#pragma unroll
          for (int e = 0; e < kDimsPerLane; ++e) dot[h] = fmaf(q[h][e], k[e], dot[h]);
        }
        const float total = reduce_heads<kTile, kLanes>(dot, lane);
        if (i < n && writes_head<kTile, kLanes>(sub)) logits[head_of_lane<kTile, kLanes>(sub) * kChunk + i] = total * scale[u];
      }
    }
    __syncthreads();

    // Online softmax: warp w takes heads w, w + kWarps, ...
    for (int h = warp; h < heads; h += kWarps) {
      float chunk_max = -INFINITY;
      for (int i = lane; i < n; i += 32) chunk_max = fmaxf(chunk_max, logits[h * kChunk + i]);
      for (int offset = 16; offset > 0; offset /= 2) chunk_max = fmaxf(chunk_max, __shfl_xor_sync(0xffffffffu, chunk_max, offset));
      const float old_max = running_max[h];
      const float new_max = fmaxf(old_max, chunk_max);
      float sum = 0.0f;
      for (int i = lane; i < n; i += 32) {
        const float e = exp2f(logits[h * kChunk + i] - new_max);
        logits[h * kChunk + i] = e;
        sum += e;
      }
      for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
      if (lane == 0) {
        const float factor = old_max == -INFINITY ? 0.0f : exp2f(old_max - new_max);
        rescale[h] = factor;
        running_sum[h] = running_sum[h] * factor + sum;
        running_max[h] = new_max;
      }
    }
    __syncthreads();

    // Phase 2: acc += p · v̂ over the chunk.
#pragma unroll
    for (int h = 0; h < kTile; ++h) {
      const float factor = h < heads ? rescale[h] : 0.0f;
#pragma unroll
      for (int e = 0; e < kDimsPerLane; ++e) acc[h][e] *= factor;
    }
    for (int base = warp * kTokensPerWarp; base < n; base += kTokensPerStep * kUnroll) {
      Raw raw[kUnroll];
      float scale[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int i = base + u * kTokensPerStep + token_in_warp;
        const int64_t slot = i < n ? chunk_slots[i] : -1;
        raw[u] = Raw{};
        scale[u] = 0.0f;  // a token past the chunk (or a bad block) adds nothing
        if (slot >= 0) {
          const int64_t at = slot * p.kv_heads * kHeadDim + head_offset;
          raw[u] = __ldg(reinterpret_cast<const Raw*>(static_cast<const char*>(p.value) + at * kElemBytes));
          scale[u] = Vec::kScaled ? __ldg(p.value_scale + slot * p.kv_heads + kv_head) : 1.0f;
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int i = base + u * kTokensPerStep + token_in_warp;
        if (i >= n) break;
        float v[kDimsPerLane];
        widen<kKind>(raw[u], v);
#pragma unroll
        for (int h = 0; h < kTile; ++h) {
          const float weight = h < heads ? logits[h * kChunk + i] * scale[u] : 0.0f;
#pragma unroll
          for (int e = 0; e < kDimsPerLane; ++e) acc[h][e] = fmaf(weight, v[e], acc[h][e]);
        }
      }
    }
    __syncthreads();
  }
  allow_dependent_launch();

  // Sum the lanes holding the same dims (different tokens), then the warps.
#pragma unroll
  for (int offset = kLanes; offset < 32; offset *= 2) {
#pragma unroll
    for (int h = 0; h < kTile; ++h) {
#pragma unroll
      for (int e = 0; e < kDimsPerLane; ++e) acc[h][e] += __shfl_xor_sync(0xffffffffu, acc[h][e], offset);
    }
  }
  float* partial = shared;  // [kWarps][kTile][kHeadDim]
  if (token_in_warp == 0) {
#pragma unroll
    for (int h = 0; h < kTile; ++h) {
#pragma unroll
      for (int e = 0; e < kDimsPerLane; ++e) partial[(warp * kTile + h) * kHeadDim + sub * kDimsPerLane + e] = acc[h][e];
    }
  }
  __syncthreads();

  const bool bad = !len_valid || bad_block != 0;
  for (int idx = threadIdx.x; idx < heads * kHeadDim; idx += kThreads) {
    const int h = idx / kHeadDim, d = idx % kHeadDim;
    float total = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) total += partial[(w * kTile + h) * kHeadDim + d];
    store_head_result<kDtype, kHeadDim>(p, seq, first_head + h, partition, d, total, running_max[h], running_sum[h],
                                        bad);
  }
}

}  // namespace qgemm::detail::attention
