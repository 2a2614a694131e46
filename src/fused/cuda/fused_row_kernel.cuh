// fused_row_kernel.cuh — the one CUDA kernel shape of every fused op: one
// thread block per token row.
//
// Register path (kItems > 0): thread `tid` owns kItems chunks of kVec
// consecutive columns, chunk i covering columns
//     [(i·blockDim + tid)·kVec, … + kVec)
// so a warp's accesses are contiguous 16-byte vectors (kVec = 16 / element
// size) or, on the scalar path (kVec = 1, any N or alignment), contiguous
// elements. The row is read from DRAM once into registers (prologue), the
// block reduces its statistics (Σv²; or Σv, Σ(v−μ)², or the mean and M2 in
// one merge tree where the op says: block_merge), normalizes in
// registers, reduces amax (or min/max) when the scale is dynamic, and writes
// q with one store per chunk: one pass over the data, two block reductions
// where a row statistic must precede the scale. One-item rows and grids of
// few rows load the normalization parameters with the row (kEarlyParams).
//
// Streaming path (kItems == 0, rows longer than the register table covers):
// the same steps with one loop over the row per step, recomputing the
// prologue from global memory (L2-resident) each time; the RMS residual is
// stored on the first pass and read back afterwards.
//
// Reductions are deterministic (a fixed shuffle tree); they differ from the
// CPU's pairwise order only — for the LayerNorm merge tree, in how the
// groups' means and M2 combine — which is the one CPU/GPU difference allowed.
#pragma once

#include <algorithm>

#include "core/cuda_launch.cuh"
#include "fused/cuda/fused_configs.h"
#include "fused/cuda/fused_ops.cuh"
#include "fused/fused_quant.h"
#include "quant/cuda/quant_reduce.cuh"

namespace qgemm::detail::fused {

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = f_add(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Sum over the block, returned to every thread (warp trees, then one warp
// over the per-warp partials).
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float partial[32];
  __shared__ float total;
  v = warp_sum(v);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float t = lane < static_cast<int>(blockDim.x / 32) ? partial[lane] : 0.0f;
    t = warp_sum(t);
    if (lane == 0) total = t;
  }
  __syncthreads();
  return total;
}

// A group's count, mean and centered sum of squares M2 = Σ(v − mean)².
// Two groups merge exactly in real arithmetic (Chan, Golub & LeVeque 1979):
//   n = na + nb,  δ = mean_b − mean_a,
//   mean = mean_a + δ·nb/n,  M2 = M2a + M2b + δ²·na·nb/n
// so LayerNorm's mean and variance take one block reduction, not a reduction
// of Σv, a broadcast of the mean and a reduction of Σ(v − mean)². Each term
// is a centered square, so it is as stable as the two-pass form (no Σv² −
// n·mean² cancellation); it differs from the CPU's pairwise two-pass sums by
// rounding, as any reduction order does. Empty groups (n = 0: lanes past the
// last warp, threads past a ragged row's end) are the identity of merge().
struct MeanM2 {
  float n = 0.0f, mean = 0.0f, m2 = 0.0f;
};

__device__ __forceinline__ MeanM2 merge(const MeanM2& a, const MeanM2& b) {
  // An empty group is returned as is, not merged with weight 0: δ² of a
  // mean beyond ~1.8e19 overflows, and ∞·0 would turn a finite row to NaN.
  if (b.n == 0.0f) return a;
  if (a.n == 0.0f) return b;
  const float n = f_add(a.n, b.n);
  // nb/n with one MUFU.RCP: within 2 ulp (a weight, not a result).
  const float wb = __fdividef(b.n, n);
  const float d = f_sub(b.mean, a.mean);
  return {n, f_fma(d, wb, a.mean), f_fma(f_mul(d, d), f_mul(a.n, wb), f_add(a.m2, b.m2))};
}

// Two groups of equal count n: mean = (mean_a + mean_b)/2, M2 = M2a + M2b +
// δ²·n/2. No division, no count to exchange, and symmetric in a and b, so
// both lanes of a shuffle pair hold the same bits.
__device__ __forceinline__ MeanM2 merge_equal(const MeanM2& a, const MeanM2& b) {
  const float d = f_sub(b.mean, a.mean);
  return {f_add(a.n, a.n), f_mul(f_add(a.mean, b.mean), 0.5f), f_fma(f_mul(d, d), f_mul(a.n, 0.5f), f_add(a.m2, b.m2))};
}

template <bool kEqualCounts>
__device__ __forceinline__ MeanM2 shuffle_merge(const MeanM2& s, int offset) {
  const MeanM2 o{kEqualCounts ? s.n : __shfl_xor_sync(0xffffffffu, s.n, offset),
                 __shfl_xor_sync(0xffffffffu, s.mean, offset), __shfl_xor_sync(0xffffffffu, s.m2, offset)};
  return kEqualCounts ? merge_equal(s, o) : merge(s, o);
}

// The block's merged statistics, returned to every thread (as block_sum).
// kEqualCounts: every thread holds the same count (rows that fill the
// block's chunks, kFull) and the block is a power-of-two number of warps
// (every launch of fused_configs.h), so every merge of the tree is of two
// equal groups; the warps' partials are merged over the first blockDim/32
// lanes only. The shuffle loops are written here rather than through
// reduce_lanes (quant_reduce.cuh): that form compiled to a different warp-0
// loop and 2–6 more registers, and the int32 LayerNorm ran 6–10 % slower at
// T ≥ 4096 on the H100 (docs/fused.md, "block_merge keeps its own shuffle loop").
template <bool kEqualCounts>
__device__ __forceinline__ MeanM2 block_merge(MeanM2 s) {
  __shared__ MeanM2 partial[32];
  __shared__ MeanM2 total;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) s = shuffle_merge<kEqualCounts>(s, offset);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  if (lane == 0) partial[warp] = s;
  __syncthreads();
  if (warp == 0) {
    s = lane < warps ? partial[lane] : MeanM2{};
    for (int offset = kEqualCounts ? warps / 2 : 16; offset > 0; offset /= 2) s = shuffle_merge<kEqualCounts>(s, offset);
    if (lane == 0) total = s;
  }
  __syncthreads();
  return total;
}

// The row's statistics for a dynamic scale: the finite min / max with 0
// (asymmetric) or the largest finite magnitude (symmetric), over the values
// this thread holds.
template <int N>
__device__ __forceinline__ void add_stats(quant::MinMax& range, quant::AbsMax& amax, const float (&y)[N],
                                          bool asymmetric) {
  if (asymmetric) {
#pragma unroll
    for (int j = 0; j < N; ++j) range.add(y[j]);
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) amax.add(y[j]);
  }
}

// The row's code from its statistics reduced over the block (thread 0
// writes scale / azp).
__device__ __forceinline__ RowCode dynamic_code(const FusedArgs& a, int64_t row, const quant::MinMax& range,
                                                const quant::AbsMax& amax) {
  const bool asymmetric = a.azp != nullptr;
  const RowCode c = asymmetric ? asymmetric_code(range, a.narrow_range) : symmetric_code(amax, a.q_fp8, a.narrow_range);
  if (threadIdx.x == 0) {
    a.scale[row] = c.scale;
    if (asymmetric) a.azp[row] = c.int8.zero_point;
  }
  return c;
}

// The row's code: static, or from its statistics reduced over the block.
__device__ __forceinline__ RowCode finish_code(const FusedArgs& a, int64_t row, const quant::MinMax& range,
                                               const quant::AbsMax& amax) {
  if (!a.dynamic) return static_code(a.scale[0], a.azp != nullptr ? a.azp[0] : 0, a.narrow_range);
  return a.azp != nullptr ? dynamic_code(a, row, reduce_block(range), quant::AbsMax{})
                          : dynamic_code(a, row, quant::MinMax{}, reduce_block(amax));
}

// The dynamic statistics of a row held in registers, in one instruction per
// element: max |y| (symmetric) or min / max of y (asymmetric) with fmaxf /
// fminf alone. NaN drops out of them as it does out of quant::AbsMax /
// MinMax (fmaxf returns the other operand); ±Inf does not, so a row whose
// reduced statistic is infinite is reduced again with the finite-only
// AbsMax / MinMax of quant_math.h (two more barriers, for such rows only).
// The scale is the one quantize() computes, bit for bit.
__device__ __forceinline__ void add_fast(quant::AbsMax& s, float y) { s.amax = fmaxf(s.amax, fabsf(y)); }
__device__ __forceinline__ void add_fast(quant::MinMax& s, float y) { s.lo = fminf(s.lo, y), s.hi = fmaxf(s.hi, y); }
__device__ __forceinline__ bool is_finite(const quant::AbsMax& s) { return isfinite(s.amax); }
__device__ __forceinline__ bool is_finite(const quant::MinMax& s) { return isfinite(s.lo) && isfinite(s.hi); }

// The row's code from its reduced statistics (the calling thread 0 writes
// scale and azp).
__device__ __forceinline__ RowCode dynamic_code(const FusedArgs& a, int64_t row, const quant::AbsMax& amax) {
  return dynamic_code(a, row, quant::MinMax{}, amax);
}
__device__ __forceinline__ RowCode dynamic_code(const FusedArgs& a, int64_t row, const quant::MinMax& range) {
  return dynamic_code(a, row, range, quant::AbsMax{});
}

// The finite-only statistics of the rare row whose fast statistic is
// infinite (it holds ±Inf), reduced by every thread. Uniform over the block.
template <class Stats, int kItems, int kVec>
__device__ __forceinline__ Stats exact_stats(const float (&v)[kItems][kVec]) {
  Stats exact;
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
#pragma unroll
    for (int j = 0; j < kVec; ++j) exact.add(v[i][j]);
  }
  return reduce_block(exact);
}

// Every warp reduces the warps' partials and computes the code itself (two
// IEEE divisions and the clamp bounds, ~30 instructions per warp). One body
// for both statistics, selected at run time: split into a MinMax and an
// AbsMax instantiation (as code_by_warp0 is), the SiLU-and-mul kernels grew
// by ~700 instructions and SiLU static fp8 ran 2–4 % slower at 4096 tokens
// (bench/results/fused-h100-code-split-ab.json).
template <int kItems, int kVec>
__device__ __forceinline__ RowCode code_by_every_warp(const FusedArgs& a, int64_t row,
                                                      const float (&v)[kItems][kVec]) {
  quant::MinMax range;
  quant::AbsMax amax;
  const bool asymmetric = a.azp != nullptr;
  if (asymmetric) {
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
#pragma unroll
      for (int j = 0; j < kVec; ++j) add_fast(range, v[i][j]);
    }
    range = reduce_block(range);
  } else {
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
#pragma unroll
      for (int j = 0; j < kVec; ++j) add_fast(amax, v[i][j]);
    }
    amax = reduce_block(amax);
  }
  const bool finite = asymmetric ? is_finite(range) : is_finite(amax);
  if (!finite) {  // uniform over the block: every thread holds the reduced value
    range = quant::MinMax{}, amax = quant::AbsMax{};
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      add_stats(range, amax, v[i], asymmetric);
    }
    __syncthreads();  // reduce_block's partials are read until here
    if (asymmetric) range = reduce_block(range);
    else amax = reduce_block(amax);
  }
  return dynamic_code(a, row, range, amax);
}

// Warp 0 alone reduces the warps' partials and computes the code, and hands
// it to the block through shared memory (one barrier more than
// code_by_every_warp, the code's ~30 instructions once per row instead of
// once per warp). It does not call reduce_block, whose every warp reduces the
// partials: that would put 10–20 shuffles and merges per warp back, ~1
// instruction per element of a 16-value row.
template <class Stats, int kItems, int kVec>
__device__ __forceinline__ RowCode code_by_warp0(const FusedArgs& a, int64_t row, const float (&v)[kItems][kVec]) {
  __shared__ Stats partial[32];
  __shared__ RowCode shared_code;
  __shared__ bool shared_finite;
  Stats s;
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
#pragma unroll
    for (int j = 0; j < kVec; ++j) add_fast(s, v[i][j]);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  s = reduce_lanes(s, 32);
  if (lane == 0) partial[warp] = s;
  __syncthreads();
  if (warp == 0) {
    const Stats total = reduce_lanes(lane < static_cast<int>(blockDim.x / 32) ? partial[lane] : Stats{}, 32);
    const bool finite = is_finite(total);
    if (finite) {
      const RowCode c = dynamic_code(a, row, total);
      if (lane == 0) shared_code = c;
    }
    if (lane == 0) shared_finite = finite;
  }
  __syncthreads();
  if (shared_finite) return shared_code;
  return dynamic_code(a, row, exact_stats<Stats>(v));
}

// The dynamic code of a row held in registers, where the op says
// (Op::kCodeByWarp0, fused_ops.cuh).
template <class Op, int kItems, int kVec>
__device__ __forceinline__ RowCode dynamic_code_in_registers(const FusedArgs& a, int64_t row,
                                                             const float (&v)[kItems][kVec]) {
  if constexpr (Op::kCodeByWarp0) {
    return a.azp != nullptr ? code_by_warp0<quant::MinMax>(a, row, v) : code_by_warp0<quant::AbsMax>(a, row, v);
  } else {
    return code_by_every_warp(a, row, v);
  }
}

template <QuantOut kOut, int N>
__device__ __forceinline__ void store_quantized_as(const FusedArgs& a, int64_t row, int64_t col,
                                                   const float (&y)[N], const RowCode& c) {
  uint8_t* out = static_cast<uint8_t*>(a.q) + row * a.ldq + col;
  if constexpr (N % 4 == 0) {
    // Four codes per word with three byte permutes (PRMT), not masks and shifts.
    Pack<uint32_t, N / 4> words;
#pragma unroll
    for (int w = 0; w < N / 4; ++w) {
      const uint32_t q[4] = {code_in_low_byte<kOut>(y[4 * w], c), code_in_low_byte<kOut>(y[4 * w + 1], c),
                             code_in_low_byte<kOut>(y[4 * w + 2], c), code_in_low_byte<kOut>(y[4 * w + 3], c)};
      words.v[w] = __byte_perm(__byte_perm(q[0], q[1], 0x0040), __byte_perm(q[2], q[3], 0x0040), 0x5410);
    }
    store_pack(reinterpret_cast<uint32_t*>(out), words);
  } else {
    Pack<uint8_t, N> q;
#pragma unroll
    for (int j = 0; j < N; ++j) q.v[j] = quantize_as<kOut>(y[j], c);
    store_pack(out, q);
  }
}

// The output codes are a run-time choice: one uniform branch per chunk, not
// a select per element.
template <int N>
__device__ __forceinline__ void store_quantized(const FusedArgs& a, int64_t row, int64_t col,
                                                const float (&y)[N], const RowCode& c) {
  if (a.q_fp8) store_quantized_as<QuantOut::kFp8>(a, row, col, y, c);
  else if (c.int8_full_range()) store_quantized_as<QuantOut::kInt8FullRange>(a, row, col, y, c);
  else store_quantized_as<QuantOut::kInt8>(a, row, col, y, c);
}

template <class Op, int kVec>
__device__ __forceinline__ float chunk_stat(const float (&v)[kVec], float mean, bool centered) {
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    const float d = centered ? f_sub(v[j], mean) : v[j];
    s = Op::kStats == RowStats::kRms || centered ? f_fma(d, d, s) : f_add(s, d);
  }
  return s;
}

// The first column of this thread's chunk i (register path).
template <int kVec>
__device__ __forceinline__ int64_t chunk_column(int i) {
  return (static_cast<int64_t>(i) * blockDim.x + threadIdx.x) * kVec;
}

// kFull: every thread's kItems chunks lie inside the row (N = kItems ·
// threads · kVec, the common case), so no chunk needs a bounds branch.
// kEarlyParams: the normalization parameters (w, or γ and β) are loaded with
// the row, before the block reductions, so that their latency overlaps the
// row's instead of following the reductions (the parameters are read once
// per row, from L2 or, when the previous kernel evicted them, DRAM); it costs
// their registers (4–8 per chunk) for the row's lifetime.
template <class Op, int kVec, int kItems, bool kFull, bool kEarlyParams>
__device__ __forceinline__ void row_in_registers(const FusedArgs& a, int64_t row) {
  const int64_t chunks = (a.hidden + kVec - 1) / kVec;
  float v[kItems][kVec];
  bool valid[kItems];
  typename Op::template NormParams<kVec> params[kItems];
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    valid[i] = kFull || chunk_column<kVec>(i) < chunks * kVec;
    if (valid[i]) {
      Op::template prologue<kVec>(a, row, chunk_column<kVec>(i), v[i], true);
      if constexpr (kEarlyParams) params[i] = Op::template load_norm_params<kVec>(a, chunk_column<kVec>(i));
    } else {  // past the row's end: zeros, which no max / min statistic notices
#pragma unroll
      for (int j = 0; j < kVec; ++j) v[i][j] = 0.0f;
    }
  }
  RowNorm norm;
  if constexpr (Op::kStats != RowStats::kNone) {
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (valid[i]) s = f_add(s, chunk_stat<Op, kVec>(v[i], 0.0f, false));
    }
    if constexpr (Op::kStats == RowStats::kRms) {
      norm.inv = inv_rms(block_sum(s), a.hidden, a.eps);
    } else if constexpr (kItems <= Op::kMergedStatsItems) {
      // This thread's count, mean and M2 over its registers, then one merge
      // tree over the block (MeanM2 above; where, fused_ops.cuh).
      MeanM2 own;
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        if (valid[i]) own.n = f_add(own.n, static_cast<float>(kVec));
      }
      own.mean = own.n > 0.0f ? __fdividef(s, own.n) : 0.0f;
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        if (valid[i]) own.m2 = f_add(own.m2, chunk_stat<Op, kVec>(v[i], own.mean, true));
      }
      const MeanM2 row_stats = block_merge<kFull>(own);
      norm.mean = row_stats.mean;
      norm.inv = inv_std(row_stats.m2, a.hidden, a.eps);
    } else {
      norm.mean = row_mean(block_sum(s), a.hidden);
      float c = 0.0f;
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        if (valid[i]) c = f_add(c, chunk_stat<Op, kVec>(v[i], norm.mean, true));
      }
      norm.inv = inv_std(block_sum(c), a.hidden, a.eps);
    }
  }
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (!valid[i]) continue;
    if constexpr (!kEarlyParams) params[i] = Op::template load_norm_params<kVec>(a, chunk_column<kVec>(i));
    Op::template normalize<kVec>(v[i], norm, params[i]);
  }
  const RowCode c = a.dynamic ? dynamic_code_in_registers<Op>(a, row, v)
                              : static_code(a.scale[0], a.azp != nullptr ? a.azp[0] : 0, a.narrow_range);
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (valid[i]) store_quantized<kVec>(a, row, chunk_column<kVec>(i), v[i], c);
  }
}

template <class Op, int kVec>
__device__ __forceinline__ void row_streaming(const FusedArgs& a, int64_t row) {
  const int64_t chunks = (a.hidden + kVec - 1) / kVec;
  bool first = true;
  float v[kVec];
  RowNorm norm;
  if constexpr (Op::kStats != RowStats::kNone) {
    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) {
      Op::template prologue<kVec>(a, row, c * kVec, v, true);
      s = f_add(s, chunk_stat<Op, kVec>(v, 0.0f, false));
    }
    first = false;
    if constexpr (Op::kStats == RowStats::kRms) {
      norm.inv = inv_rms(block_sum(s), a.hidden, a.eps);
    } else {
      norm.mean = row_mean(block_sum(s), a.hidden);
      float centered = 0.0f;
      for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) {
        Op::template prologue<kVec>(a, row, c * kVec, v, false);
        centered = f_add(centered, chunk_stat<Op, kVec>(v, norm.mean, true));
      }
      norm.inv = inv_std(block_sum(centered), a.hidden, a.eps);
    }
  }
  quant::MinMax range;
  quant::AbsMax amax;
  if (a.dynamic) {
    for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) {
      Op::template prologue<kVec>(a, row, c * kVec, v, first);
      Op::template normalize<kVec>(v, norm, Op::template load_norm_params<kVec>(a, c * kVec));
      add_stats(range, amax, v, a.azp != nullptr);
    }
    first = false;
  }
  const RowCode code = finish_code(a, row, range, amax);
  for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) {
    Op::template prologue<kVec>(a, row, c * kVec, v, first);
    Op::template normalize<kVec>(v, norm, Op::template load_norm_params<kVec>(a, c * kVec));
    store_quantized<kVec>(a, row, c * kVec, v, code);
  }
}

// Minimum resident blocks (of up to 512 threads) the register allocation must
// allow, from the op's kMinBlocksTwoItems / kMinBlocksFourItems (fused_ops.cuh):
//   4 (≤ 32 registers): plain RMSNorm and the activations with two items, so
//     that 2048 threads — eight 256-thread rows — fit an SM (ptxas spills at
//     most 32 bytes); H100, 16384 tokens: RMSNorm 70 → 81 % of copy bandwidth
//     at N = 4096, 74 → 84 % at 8192 (plain RMSNorm now takes four items
//     there, faster still: fused_configs.h, prefers_four_items);
//   3 (≤ 40 registers): the float LayerNorm with two items (47 → 40, 8 bytes
//     of spill; 65–71 → 83–88 % at 16384×8192) and the int32 GELU with four
//     (44 → 40; 67–80 → 81–92 %);
//   2 (≤ 64 registers) with four items otherwise: no spills with 16-bit
//     inputs, and two 512-thread rows per SM where SiLU (86), LayerNorm (72)
//     and GELU (69) fitted one (16384×14336: SiLU 57–69 → 90–96 %);
//   1: ptxas's choice — the residual RMSNorm and the int32 LayerNorm with two
//     items, and eight items.
// The int32 LayerNorm capped at 40 with four items was 3–8 points slower.
// Capped at what the SM holds: sm_86/87/89 (1536 threads) take three
// 512-thread blocks, not four (ptxas ignores a larger bound with a warning).
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890)
constexpr int kFusedBlocksPerSmLimit = 1536 / kFusedMaxThreads;
#else
constexpr int kFusedBlocksPerSmLimit = 2048 / kFusedMaxThreads;
#endif
template <class Op, int kItems>
constexpr int kMinBlocksPerSm = std::min(
    kFusedBlocksPerSmLimit, kItems == 2 ? Op::kMinBlocksTwoItems : kItems == 4 ? Op::kMinBlocksFourItems : 1);

// kFewRows: the build for grids of few rows (FusedLaunch::few_rows, at most
// two 512-thread rows per SM), whose time is one row's latency. It loads the
// normalization parameters with the row (kEarlyParams) and is capped at two
// blocks per SM — 64 registers — instead of the op's occupancy cap, under
// which the early parameters spill (two-item rows: LayerNorm 24 → 64 bytes
// of stack, RMSNorm 16 → 56). Uncapped, the two-item LayerNorm took more
// than 64 registers, one row per SM, and ran 256×8192 24 % slower.
template <class Op, int kVec, int kItems, bool kFewRows = false>
__global__ void __launch_bounds__(kFusedMaxThreads, (kFewRows ? 2 : kMinBlocksPerSm<Op, kItems>)) fused_row_kernel(const FusedArgs args) {
  constexpr bool kEarlyParams = kItems == 1 || kFewRows;
  wait_for_preceding_grids();
  const int64_t row = blockIdx.x;
  if constexpr (kItems > 0) {
    if (args.hidden == static_cast<int64_t>(kItems) * blockDim.x * kVec) {
      row_in_registers<Op, kVec, kItems, true, kEarlyParams>(args, row);
    } else {
      row_in_registers<Op, kVec, kItems, false, kEarlyParams>(args, row);
    }
  } else {
    row_streaming<Op, kVec>(args, row);
  }
  // At the end of the row, not after the wait: H100, graph replays through
  // Python, 16 and 256 tokens, 20 cells: at the end every cell 4–18 % faster
  // than without PDL; at the start SiLU-and-mul at 256 tokens was 3–6 %
  // slower than without it (the next kernel's resident blocks competing with
  // this one's) (docs/performance.md, "Programmatic dependent launch").
  allow_dependent_launch();
}

}  // namespace qgemm::detail::fused
