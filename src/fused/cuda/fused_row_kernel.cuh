// fused_row_kernel.cuh — the one CUDA kernel shape of every fused op: one
// thread block per token row.
//
// Register path (kItems > 0): thread `tid` owns kItems chunks of kVec
// consecutive columns, chunk i covering columns
//     [(i·blockDim + tid)·kVec, … + kVec)
// so a warp's accesses are contiguous 16-byte vectors (kVec = 16 / element
// size) or, on the scalar path (kVec = 1, any N or alignment), contiguous
// elements. The row is read from DRAM once into registers (prologue), the
// block reduces its statistics (Σv² or Σv, Σ(v−μ)²), normalizes in
// registers, reduces amax (or min/max) when the scale is dynamic, and writes
// q with one store per chunk: one pass over the data, two block reductions
// where a row statistic must precede the scale.
//
// Streaming path (kItems == 0, rows longer than the register table covers):
// the same steps with one loop over the row per step, recomputing the
// prologue from global memory (L2-resident) each time; the RMS residual is
// stored on the first pass and read back afterwards.
//
// Reductions are deterministic (a fixed shuffle tree); they differ from the
// CPU's pairwise order only, which is the one CPU/GPU difference allowed.
#pragma once

#include "fused/cuda/fused_ops.cuh"
#include "fused/fused_quant_math.h"

namespace qgemm::detail::fused {

constexpr int kMaxThreads = 512;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = f_add(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

__device__ __forceinline__ RowRange warp_range(RowRange r) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    RowRange o;
    o.amax = __shfl_xor_sync(0xffffffffu, r.amax, offset);
    o.lo = __shfl_xor_sync(0xffffffffu, r.lo, offset);
    o.hi = __shfl_xor_sync(0xffffffffu, r.hi, offset);
    r.merge(o);
  }
  return r;
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

__device__ __forceinline__ RowRange block_range(RowRange r) {
  __shared__ RowRange partial[32];
  __shared__ RowRange total;
  r = warp_range(r);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = r;
  __syncthreads();
  if (warp == 0) {
    RowRange t = lane < static_cast<int>(blockDim.x / 32) ? partial[lane] : RowRange{};
    t = warp_range(t);
    if (lane == 0) total = t;
  }
  __syncthreads();
  return total;
}

// The row's scale: static, or from its range (thread 0 writes scale / azp).
__device__ __forceinline__ RowScale finish_scale(const FusedArgs& a, int64_t row, const RowRange& local,
                                                 QuantRange range) {
  RowScale s;
  if (!a.dynamic) {
    s.scale = a.scale[0];
    s.zero_point = a.azp != nullptr ? a.azp[0] : 0;
    return s;
  }
  s = dynamic_row_scale(block_range(local), range, a.azp != nullptr);
  if (threadIdx.x == 0) {
    a.scale[row] = s.scale;
    if (a.azp != nullptr) a.azp[row] = s.zero_point;
  }
  return s;
}

template <int N>
__device__ __forceinline__ void store_quantized(const FusedArgs& a, int64_t row, int64_t col,
                                                const float (&y)[N], const RowScale& s, QuantRange range) {
  Pack<uint8_t, N> q;
#pragma unroll
  for (int j = 0; j < N; ++j) q.v[j] = quantize_bits(y[j], s.scale, s.zero_point, range, a.q_fp8);
  store_pack(static_cast<uint8_t*>(a.q) + row * a.ldq + col, q);
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

template <class Op, int kVec, int kItems>
__device__ __forceinline__ void row_in_registers(const FusedArgs& a, int64_t row, QuantRange range) {
  const int64_t chunks = (a.hidden + kVec - 1) / kVec;
  float v[kItems][kVec];
  bool valid[kItems];
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    valid[i] = chunk_column<kVec>(i) < chunks * kVec;
    if (valid[i]) Op::template prologue<kVec>(a, row, chunk_column<kVec>(i), v[i], true);
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
  RowRange local;
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (!valid[i]) continue;
    Op::template normalize<kVec>(a, chunk_column<kVec>(i), v[i], norm);
    if (!a.dynamic) continue;
#pragma unroll
    for (int j = 0; j < kVec; ++j) local.add(v[i][j]);
  }
  const RowScale s = finish_scale(a, row, local, range);
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (valid[i]) store_quantized<kVec>(a, row, chunk_column<kVec>(i), v[i], s, range);
  }
}

template <class Op, int kVec>
__device__ __forceinline__ void row_streaming(const FusedArgs& a, int64_t row, QuantRange range) {
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
  RowRange local;
  if (a.dynamic) {
    for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) {
      Op::template prologue<kVec>(a, row, c * kVec, v, first);
      Op::template normalize<kVec>(a, c * kVec, v, norm);
#pragma unroll
      for (int j = 0; j < kVec; ++j) local.add(v[j]);
    }
    first = false;
  }
  const RowScale s = finish_scale(a, row, local, range);
  for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) {
    Op::template prologue<kVec>(a, row, c * kVec, v, first);
    Op::template normalize<kVec>(a, c * kVec, v, norm);
    store_quantized<kVec>(a, row, c * kVec, v, s, range);
  }
}

template <class Op, int kVec, int kItems>
__global__ void __launch_bounds__(kMaxThreads) fused_row_kernel(const FusedArgs args) {
  const int64_t row = blockIdx.x;
  const QuantRange range = quant_range(args.q_fp8, args.narrow_range);
  if constexpr (kItems > 0) {
    row_in_registers<Op, kVec, kItems>(args, row, range);
  } else {
    row_streaming<Op, kVec>(args, row, range);
  }
}

}  // namespace qgemm::detail::fused
