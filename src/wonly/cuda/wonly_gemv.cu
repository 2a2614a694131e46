// Small-M weight-only kernel (M ≤ 32 tokens): streams the weight once with
// 16-byte loads, dequantizes in registers and multiplies on the tensor cores
// with the roles swapped — weight rows are the MMA's M=16 side, tokens its
// N=8 side (one n8 block for M ≤ 8, two for M ≤ 16, four for M ≤ 32) — so
// every loaded weight serves all tokens and the CUDA cores only dequantize.
//
// Block: kTiles m16 weight tiles (16·kTiles rows; the shapes per weight type
// and token count are at `launch` below) × kWarps warps splitting K. A warp
// walks K tiles tile = warp, warp + kWarps, …; a K tile is 4 chunks of 16
// bytes per row (128 int4 / 64 int8 elements) and lane (g = lane/4, t =
// lane%4) loads chunk t of rows g and g+8 of each m16 tile:
//
//        chunk:   t=0        t=1        t=2        t=3
//   row g     [ lane 4g ][ lane 4g+1 ][ lane 4g+2 ][ lane 4g+3 ]   16 B each
//   row g+8   [ lane 4g ][ lane 4g+1 ][ lane 4g+2 ][ lane 4g+3 ]
//
// (prepacked: the warp's 16 rows × 64 B are two contiguous 512-byte runs).
// The MMA's K is a sum, so any k order works if A and B agree: MMA step s
// gives lane t's k slots {2t, 2t+1, 2t+8, 2t+9} the elements 4s…4s+3 of the
// lane's own chunk. A lane therefore needs no data from other lanes: its
// weight chunk and the same 16-element (int8) / 32-element (int4) slice of
// each of its tokens' activations (token g of each n8 block) — contiguous
// 16-byte loads on both sides. The warps' partial sums meet in shared memory
// (fixed order), then bias and rounding. Grids too small for the GPU split K
// across a cluster of CTAs (grid z; their K tiles dealt round-robin to all
// the cluster's warps) whose block sums every CTA adds for its slice of the
// outputs (wonly_split_k.cuh).
//
// Dequantization (wonly_device.cuh): ŵ = round_T(q·s_T + o_T) with HFMA2, the
// result already the bf16x2/f16x2 A-fragment register. Per 8 int4 elements:
// 2 LOP3 + 1 SHF + 6 PRMT + 8 HFMA2 (2.1 instructions per element); bf16
// int4 takes the scaled form of wonly_dequant_scaled.cuh instead (2 LOP3 +
// 1 SHF + 4 PRMT + 4 HFMA2: the accumulators hold 2^-8 of the sums, K tiles
// whose parameters it cannot take exactly fall back to the form above,
// `accumulate_tile`). Loads address the arguments' pointers plus 32-bit
// offsets (Cursor). Depth 1 loads the next K tile after this one's math; depth 2
// (int4 with fp32 parameters: bf16's 32-row shapes, fp16's at M = 5–8 on
// tall weights) keeps the next tile's weight chunks and parameters in flight
// during it and loads each tile's activations when it starts. SASS per
// weight element (sm_90a, inner loop, bf16, magic form): int4 2.9 (M ≤ 8 and
// M ≤ 16), int8 3.9–4.5 (budget at 85 % of copy bandwidth: 5.8 int4 / 11.6
// int8).
#include <algorithm>
#include <string>
#include <type_traits>

#include "core/cuda_check.h"
#include "core/cuda_device_info.h"
#include "wonly/cuda/wonly_cuda.h"
#include "wonly/cuda/wonly_dequant_scaled.cuh"
#include "wonly/cuda/wonly_device.cuh"
#include "wonly/cuda/wonly_split_k.cuh"

namespace qgemm::detail {
namespace {

using namespace wonly;

template <bool kInt4, int kTokenBlocks, int kTiles>
struct TileFragments {
  static constexpr int kActWords = kInt4 ? 16 : 8;  // E/2 words of 2 activations
  uint4 weight[kTiles][2];                           // [tile][row g, row g+8]
  float scale[kTiles][2], offset[kTiles][2];
  uint32_t act[kTokenBlocks][kActWords];
};

__device__ __forceinline__ uint4 load_stream(const uint8_t* p) {
  return __ldcs(reinterpret_cast<const uint4*>(p));  // read once: evict first
}

// A lane's load cursor: where its part of one K tile is — chunk t of rows g
// and g+8 of each m16 tile, their scale and offset, and the activations of
// token g of each n8 block (tokens ≥ M read token 0: their MMA columns are
// never stored) — as 32-bit byte offsets from the arguments' pointers: the
// lane's rows (fixed) plus the K tile's (one add per K step, shared by every
// row). ptxas adds pointer (a kernel-parameter constant) + row + K tile in
// one IADD3 + IADD3.X per load. A 64-bit pointer per row instead, stepped
// each K tile, cost two registers and two adds per row and, the adds
// splitting each pointer's halves, a pair copy before every load
// (check_gemv_offsets bounds the offsets; docs/weight_only.md, "32-bit load
// offsets").
template <int kTokenBlocks, int kTiles>
struct Cursor {
  uint32_t w_row[kTiles][2];                    // the lane's rows (clamped to N - 1) in w
  uint32_t s_row[kTiles][2], o_row[kTiles][2];  // their group-0 scale and offset
  uint32_t a_row[kTokenBlocks];                 // the lane's tokens in a
  uint32_t w_k, p_k, a_k;                       // the K tile's chunk, group and activations
};

// Keeps each offset in a register: an empty asm makes it opaque, so ptxas
// cannot recompute it in the loop from the thread index and the arguments
// (it did, in every K step: ~30 more instructions per K tile at M = 1).
__device__ __forceinline__ uint32_t pinned(uint32_t x) {
  asm volatile("" : "+r"(x));
  return x;
}

template <bool kParams16>
using Param = std::conditional_t<kParams16, uint16_t, float>;  // fp32 or 16-bit parameters

// The cursor at K tile `tile`.
template <bool kInt4, bool kParams16, int kTokenBlocks, int kTiles>
__device__ __forceinline__ Cursor<kTokenBlocks, kTiles> cursor_at(const WeightOnlyArgs& args, int64_t row_base,
                                                                  int lane, int tile) {
  constexpr int kElems = kInt4 ? 32 : 16;
  constexpr int64_t kParamBytes = sizeof(Param<kParams16>);
  const int g = lane >> 2, t = lane & 3;
  const int chunk = tile * 4 + t;
  const int group = chunk >> chunk_group_shift<kInt4>(args);
  Cursor<kTokenBlocks, kTiles> c;
#pragma unroll
  for (int r = 0; r < kTiles; ++r) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t row = min(row_base + r * 16 + h * 8 + g, args.n - 1);
      c.w_row[r][h] = pinned(static_cast<uint32_t>(args.w_addr.chunk_offset(row, 0)));
      c.s_row[r][h] = pinned(static_cast<uint32_t>(row * args.ld_scales * kParamBytes));
      c.o_row[r][h] = pinned(static_cast<uint32_t>(row * args.ld_offsets * kParamBytes));
    }
  }
#pragma unroll
  for (int b = 0; b < kTokenBlocks; ++b) {
    const int64_t token = b * 8 + g < args.m ? b * 8 + g : 0;
    c.a_row[b] = pinned(static_cast<uint32_t>(token * args.lda * 2));
  }
  c.w_k = pinned(static_cast<uint32_t>(args.w_addr.chunk_offset(0, chunk)));
  c.p_k = pinned(static_cast<uint32_t>(group * args.params_group_stride * kParamBytes));
  c.a_k = pinned(static_cast<uint32_t>(chunk * kElems * 2));
  return c;
}

// The parameter row + k bytes into `params`.
template <bool kBf16, bool kParams16>
__device__ __forceinline__ float load_param_at(const void* params, uint32_t row, uint32_t k) {
  return load_param<kBf16>(reinterpret_cast<const Param<kParams16>*>(static_cast<const uint8_t*>(params) + row + k));
}

// Loads the weight chunks, scales and offsets of the cursor's K tile into f
// and steps the cursor's weight and parameter offsets by kWarps K tiles
// (w_step and p_step bytes: the groups stepped × the group stride).
// kChecked: the partial last K tile, whose chunks past K (valid = false)
// load zeros.
template <bool kChecked, bool kBf16, bool kParams16, bool kInt4, int kTokenBlocks, int kTiles>
__device__ __forceinline__ void load_weights(const WeightOnlyArgs& args, Cursor<kTokenBlocks, kTiles>& c,
                                             uint32_t w_step, uint32_t p_step, bool has_offsets, bool valid,
                                             TileFragments<kInt4, kTokenBlocks, kTiles>& f) {
#pragma unroll
  for (int r = 0; r < kTiles; ++r) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (!kChecked || valid) {
        f.weight[r][h] = load_stream(args.w + c.w_row[r][h] + c.w_k);
        f.scale[r][h] = load_param_at<kBf16, kParams16>(args.scales, c.s_row[r][h], c.p_k);
        f.offset[r][h] = has_offsets ? load_param_at<kBf16, kParams16>(args.offsets, c.o_row[r][h], c.p_k) : 0.0f;
      } else {
        f.weight[r][h] = make_uint4(0, 0, 0, 0);
        f.scale[r][h] = 0.0f;
        f.offset[r][h] = 0.0f;
      }
    }
  }
  c.w_k += w_step;
  c.p_k += p_step;
}

// Loads the activations of the cursor's K tile into f and steps their
// offset by a_step bytes.
template <bool kChecked, bool kInt4, int kTokenBlocks, int kTiles>
__device__ __forceinline__ void load_activations(const WeightOnlyArgs& args, Cursor<kTokenBlocks, kTiles>& c,
                                                 uint32_t a_step, bool valid,
                                                 TileFragments<kInt4, kTokenBlocks, kTiles>& f) {
  constexpr int kElems = kInt4 ? 32 : 16;
#pragma unroll
  for (int b = 0; b < kTokenBlocks; ++b) {
    const auto* src = reinterpret_cast<const uint4*>(static_cast<const uint8_t*>(args.a) + c.a_row[b] + c.a_k);
#pragma unroll
    for (int v = 0; v < kElems / 8; ++v) {
      const uint4 x = (!kChecked || valid) ? __ldg(src + v) : make_uint4(0, 0, 0, 0);
      f.act[b][4 * v] = x.x;
      f.act[b][4 * v + 1] = x.y;
      f.act[b][4 * v + 2] = x.z;
      f.act[b][4 * v + 3] = x.w;
    }
  }
  c.a_k += a_step;
}

// Both: the whole K tile.
template <bool kChecked, bool kBf16, bool kParams16, bool kInt4, int kTokenBlocks, int kTiles>
__device__ __forceinline__ void load_tile(const WeightOnlyArgs& args, Cursor<kTokenBlocks, kTiles>& c,
                                          uint32_t w_step, uint32_t p_step, uint32_t a_step, bool has_offsets,
                                          bool valid, TileFragments<kInt4, kTokenBlocks, kTiles>& f) {
  load_weights<kChecked, kBf16, kParams16>(args, c, w_step, p_step, has_offsets, valid, f);
  load_activations<kChecked>(args, c, a_step, valid, f);
}

// acc[r][b] += ŵ(tile r) · a(token block b) over the lane's chunk; kScaled
// (bf16 int4 only): 2^-8·ŵ, in the scaled form of wonly_dequant_scaled.cuh.
template <bool kBf16, bool kInt4, bool kScaled, int kTokenBlocks, int kTiles>
__device__ __forceinline__ void mma_tile(const TileFragments<kInt4, kTokenBlocks, kTiles>& f,
                                         float acc[kTiles][kTokenBlocks][4]) {
  static_assert(!kScaled || (kBf16 && kInt4), "the scaled form is bf16 int4's");
  constexpr int kWords = 4;  // 16-byte chunk
  uint32_t s2[kTiles][2], o2[kTiles][2];  // (s_T, s_T), (o_T, o_T): once per chunk
#pragma unroll
  for (int r = 0; r < kTiles; ++r)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      s2[r][h] = kScaled ? scaled_scale2(f.scale[r][h]) : param2<kBf16>(f.scale[r][h]);
      o2[r][h] = kScaled ? scaled_offset2(f.offset[r][h]) : param2<kBf16>(f.offset[r][h]);
    }
#pragma unroll
  for (int word = 0; word < kWords; ++word) {
#pragma unroll
    for (int r = 0; r < kTiles; ++r) {
      const uint32_t lo_word = reinterpret_cast<const uint32_t*>(&f.weight[r][0])[word];
      const uint32_t hi_word = reinterpret_cast<const uint32_t*>(&f.weight[r][1])[word];
      if constexpr (kScaled) {
        mma_chunk_word_scaled(lo_word, hi_word, s2[r][0], o2[r][0], s2[r][1], o2[r][1], word, f.act, acc[r]);
      } else {
        mma_chunk_word<kBf16, kInt4>(lo_word, hi_word, s2[r][0], o2[r][0], s2[r][1], o2[r][1], word, f.act, acc[r]);
      }
    }
  }
}

template <int kTiles, int kTokenBlocks>
__device__ __forceinline__ void scale_acc(float acc[kTiles][kTokenBlocks][4], float factor) {
#pragma unroll
  for (int r = 0; r < kTiles; ++r)
#pragma unroll
    for (int b = 0; b < kTokenBlocks; ++b)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[r][b][e] *= factor;
}

// bf16 int4 weights accumulate 2^-8·ŵ (wonly_dequant_scaled.cuh): a K tile
// takes the scaled form when every lane's scales and offsets allow it
// (a warp-wide vote; real weights always do), else the magic form on the
// accumulators brought back to the sums' scale for the tile (× 2^8, then
// × 2^-8: exact in fp32). Other weights and dtypes take the magic form.
template <bool kBf16, bool kInt4>
constexpr bool kScaledAcc = kBf16 && kInt4;

template <bool kBf16, bool kInt4, int kTokenBlocks, int kTiles>
__device__ __forceinline__ void accumulate_tile(const TileFragments<kInt4, kTokenBlocks, kTiles>& f,
                                                float acc[kTiles][kTokenBlocks][4]) {
  if constexpr (kScaledAcc<kBf16, kInt4>) {
    bool exact = true;
#pragma unroll
    for (int r = 0; r < kTiles; ++r)
#pragma unroll
      for (int h = 0; h < 2; ++h) exact &= scaled_dequant_exact(f.scale[r][h], f.offset[r][h]);
    if (__all_sync(0xffffffffu, exact)) {
      mma_tile<kBf16, kInt4, true, kTokenBlocks, kTiles>(f, acc);
    } else {
      scale_acc<kTiles, kTokenBlocks>(acc, kScaledAccFactor);
      mma_tile<kBf16, kInt4, false, kTokenBlocks, kTiles>(f, acc);
      scale_acc<kTiles, kTokenBlocks>(acc, 1.0f / kScaledAccFactor);
    }
  } else {
    mma_tile<kBf16, kInt4, false, kTokenBlocks, kTiles>(f, acc);
  }
}

// kTiles m16 weight tiles per block (16·kTiles rows); kDepth 1: one register
// buffer, the next K tile loaded after this one's math; kDepth 2: the next K
// tile's weight chunks and parameters loaded before it (two buffers of them),
// the activations at each tile's start.
template <bool kBf16, bool kParams16, bool kInt4, int kTokenBlocks, int kTiles, int kDepth, int kWarps,
          int kMinBlocks>
__global__ void __launch_bounds__(kWarps * 32, kMinBlocks) wonly_gemv_kernel(const WeightOnlyArgs args) {
  static_assert(kDepth == 1 || kDepth == 2, "depth 1 or 2");
  // The next launch is allowed at the end of the block's work, not after
  // this wait: H200, qgemm bench pdl, W4 g128, PDL on, µs start → end:
  // 1×11008×4096 14.69 → 13.16 (a grid of 1.3 waves, whose later blocks
  // competed with the next kernel's early ones: 0.96× PDL off before),
  // 16×4096×4096 9.71 → 9.13, 1×4096×4096 7.46 → 7.15, the rest within
  // ±0.5 % (docs/performance.md, "Programmatic dependent launch").
  wait_for_preceding_grids();
  constexpr int kElems = kInt4 ? 32 : 16;
  constexpr int kAcc = kTiles * kTokenBlocks * 4;
  __shared__ float partial[kWarps][kAcc][32];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t row_base = static_cast<int64_t>(blockIdx.x) * (16 * kTiles);
  // Full K tiles: warp w of CTA z (of gridDim.z splitting K in a cluster)
  // is warp v = z·kWarps + w of V = gridDim.z·kWarps and takes tiles v,
  // v + V, …; a partial last tile (K not a multiple of 4·E) is done by one
  // warp afterwards, checked.
  const int chunks = static_cast<int>(args.chunks_per_row());
  const int full_tiles = chunks / 4;
  const int num_warps = static_cast<int>(gridDim.z) * kWarps;
  const int my_warp = static_cast<int>(blockIdx.z) * kWarps + warp;
  const int my_tiles = (full_tiles - my_warp + num_warps - 1) / num_warps;  // may be ≤ 0

  float acc[kTiles][kTokenBlocks][4] = {};
  const bool has_offsets = args.offsets != nullptr;
  // The cursor's steps, in bytes: num_warps K tiles of weight; num_warps·4
  // chunks, in groups, times the group stride (wonly_args.h: 1 row-major,
  // ≥ N group-major); num_warps·4 chunks of activations. Pinned, like the
  // cursor: ptxas would otherwise recompute each product in every K step.
  const int shift = chunk_group_shift<kInt4>(args);
  const uint32_t w_step = pinned(static_cast<uint32_t>(num_warps * args.w_addr.tile_stride));
  const uint32_t p_step = pinned(static_cast<uint32_t>(
      shift > 5 ? 0 : ((4 * num_warps) >> shift) * args.params_group_stride * sizeof(Param<kParams16>)));
  const uint32_t a_step = pinned(static_cast<uint32_t>(num_warps * 4 * kElems * 2));
  auto cursor = cursor_at<kInt4, kParams16, kTokenBlocks, kTiles>(args, row_base, lane, my_warp);
  if constexpr (kDepth == 2) {
    // The next K tile's weight chunks, scales and offsets are in flight
    // during this tile's math; its activations (L1 / L2 hits, shared by every
    // warp) are loaded when it starts, so only the streamed part is double
    // buffered.
    TileFragments<kInt4, kTokenBlocks, kTiles> f[2];
    if (my_tiles > 0) load_weights<false, kBf16, kParams16>(args, cursor, w_step, p_step, has_offsets, true, f[0]);
    for (int it = 0; it < my_tiles; it += 2) {
      load_activations<false>(args, cursor, a_step, true, f[0]);
      if (it + 1 < my_tiles) {
        load_weights<false, kBf16, kParams16>(args, cursor, w_step, p_step, has_offsets, true, f[1]);
      }
      accumulate_tile<kBf16>(f[0], acc);
      if (it + 1 < my_tiles) {
        load_activations<false>(args, cursor, a_step, true, f[1]);
        if (it + 2 < my_tiles) {
          load_weights<false, kBf16, kParams16>(args, cursor, w_step, p_step, has_offsets, true, f[0]);
        }
        accumulate_tile<kBf16>(f[1], acc);
      }
    }
  } else {
    // One buffer: the next K tile is loaded after this tile's math.
    TileFragments<kInt4, kTokenBlocks, kTiles> f;
    if (my_tiles > 0) {
      load_tile<false, kBf16, kParams16>(args, cursor, w_step, p_step, a_step, has_offsets, true, f);
    }
    for (int it = 0; it < my_tiles; ++it) {
      accumulate_tile<kBf16>(f, acc);
      if (it + 1 < my_tiles) {
        load_tile<false, kBf16, kParams16>(args, cursor, w_step, p_step, a_step, has_offsets, true, f);
      }
    }
  }
  if (chunks % 4 != 0 && my_warp == full_tiles % num_warps) {
    auto tail = cursor_at<kInt4, kParams16, kTokenBlocks, kTiles>(args, row_base, lane, full_tiles);
    const bool valid = full_tiles * 4 + (lane & 3) < chunks;
    TileFragments<kInt4, kTokenBlocks, kTiles> last;
    load_tile<true, kBf16, kParams16>(args, tail, 0, 0, 0, has_offsets, valid, last);
    accumulate_tile<kBf16>(last, acc);
  }
  if constexpr (kScaledAcc<kBf16, kInt4>) scale_acc<kTiles, kTokenBlocks>(acc, kScaledAccFactor);

#pragma unroll
  for (int r = 0; r < kTiles; ++r)
#pragma unroll
    for (int b = 0; b < kTokenBlocks; ++b)
#pragma unroll
      for (int e = 0; e < 4; ++e) partial[warp][(r * kTokenBlocks + b) * 4 + e][lane] = acc[r][b][e];
  __syncthreads();

  // One output per (accumulator register, lane) pair: sum the warps in order
  // (then, split K, the cluster's CTAs in rank order: wonly_split_k.cuh).
  auto store = [&](int i, float sum) {
    const int reg = i / 32, src_lane = i % 32;
    const int r = reg / (kTokenBlocks * 4), b = (reg / 4) % kTokenBlocks, e = reg % 4;
    const int g = src_lane >> 2, t = src_lane & 3;
    const int64_t row = row_base + r * 16 + g + (e >= 2 ? 8 : 0);
    const int64_t token = b * 8 + 2 * t + (e & 1);
    if (row < args.n && token < args.m) store_output<kBf16>(args, token, row, sum);
  };
  auto block_sum = [&](int i) {
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum = __fadd_rn(sum, partial[w][i / 32][i % 32]);
    return sum;
  };
  if (gridDim.z == 1) {
    for (int i = threadIdx.x; i < kAcc * 32; i += kWarps * 32) store(i, block_sum(i));
    allow_dependent_launch();
    return;
  }
  // Split K: every CTA of the cluster adds the ranks' block sums, in rank
  // order, for its slice of the outputs and stores that slice — the same
  // sums as rank 0 adding every peer, but the DSMEM reads and the stores are
  // spread over the cluster, and one peer's reads are all in flight at once
  // (rank 0 alone, a chain per output, kept the other CTAs waiting at the
  // barrier). The second barrier keeps every CTA's sums alive until read.
  __shared__ float reduced[kAcc * 32];
  for (int i = threadIdx.x; i < kAcc * 32; i += kWarps * 32) reduced[i] = block_sum(i);
  cluster_sync();
  constexpr int kOutputs = kAcc * 32, kPerThread = (kOutputs + kWarps * 32 - 1) / (kWarps * 32);
  const int splits = static_cast<int>(gridDim.z), rank = static_cast<int>(cluster_rank());
  const int lo = kOutputs * rank / splits, hi = kOutputs * (rank + 1) / splits;
  float sum[kPerThread];
  for (int peer = 0; peer < splits; ++peer) {
    const float* remote = cluster_peer(reduced, static_cast<unsigned>(peer));
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int i = lo + static_cast<int>(threadIdx.x) + j * kWarps * 32;
      if (i < hi) sum[j] = peer == 0 ? remote[i] : __fadd_rn(sum[j], remote[i]);
    }
  }
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    const int i = lo + static_cast<int>(threadIdx.x) + j * kWarps * 32;
    if (i < hi) store(i, sum[j]);
  }
  allow_dependent_launch();
  cluster_sync();
}

// Split K across a cluster while the row blocks fill at most half of the
// resident CTAs, keeping ≥ 4 K tiles per warp. E.g. H100, int4, (N, K) =
// (4096, 11008): M ≤ 8, 128 blocks of 32 rows → 2 splits; M ≤ 16, 64 blocks
// of 64 rows → 4; (4096, 4096): M ≤ 8 none, M ≤ 16 2; (28672, 8192): none.
// The grid a kernel shape launches for args: its row blocks, the split of K
// across a cluster (split_k_factor), and the blocks resident at once — what
// launch_variant launches and the shape rules below weigh.
struct GemvGrid {
  int64_t blocks;
  int splits;
  int64_t resident;
};
template <bool kBf16, bool kParams16, bool kInt4, int kTokenBlocks, int kTiles, int kDepth, int kWarps, int kMinBlocks>
GemvGrid gemv_grid(const WeightOnlyArgs& args) {
  constexpr auto kernel = wonly_gemv_kernel<kBf16, kParams16, kInt4, kTokenBlocks, kTiles, kDepth, kWarps, kMinBlocks>;
  const KernelInfo info = kernel_info<kernel>(args.device.index, kWarps * 32);
  const int64_t blocks = (args.n + 16 * kTiles - 1) / (16 * kTiles);
  return {blocks, split_k_factor(info, blocks, args.chunks_per_row() / 4, 4 * kWarps), info.resident_ctas};
}

template <bool kBf16, bool kParams16, bool kInt4, int kTokenBlocks, int kTiles, int kDepth, int kWarps,
          int kMinBlocks = 1>
void launch_variant(const WeightOnlyArgs& args) {
  constexpr auto kernel = wonly_gemv_kernel<kBf16, kParams16, kInt4, kTokenBlocks, kTiles, kDepth, kWarps, kMinBlocks>;
  const GemvGrid grid = gemv_grid<kBf16, kParams16, kInt4, kTokenBlocks, kTiles, kDepth, kWarps, kMinBlocks>(args);
  launch_split_k(kernel, dim3(static_cast<unsigned>(grid.blocks)), kWarps * 32, 0, as_cuda_stream(args.stream),
                 args.device.index, grid.splits, args);
}

// Kernel shapes <token blocks, m16 tiles per block, depth, warps, min
// blocks/SM>, measured on H100 (issue 7; the candidates and their times are in
// docs/weight_only.md, "Register-count sweep" and "Block shapes tried"):
//
// M ≤ 8, int4:
//   <1, 2, 1, 8>     16-bit parameters, or fp16 outside the 4-warp depth-2
//                    rule below: 32 rows, 8 warps, 112–117 registers (16
//                    warps per SM; 120 before the 32-bit offsets): 55–60
//                    µs at M = 1 on (28672, 8192), best of 7 shapes.
//   <1, 1, 1, 4, 7>  when M ≤ 4 and 16-row blocks of 4 warps give every SM
//                    ≥ kManyRowsWarpsPerSm warps: 64 registers, 32 warps per
//                    SM (72 and 28 before the 32-bit offsets, when these
//                    times were taken) to hide the chain load → dequantize →
//                    MMA. M = 1:
//                    (28672, 8192) 60.0 → 53.8 µs, (57344, 8192) 108.8 →
//                    99.7, (11008, 4096) 18.8 → 16.3; M = 4 2–12 % faster.
//                    Not at M = 8 (up to 8 % slower: every block re-reads 8
//                    tokens' activations, twice as often as with 32 rows),
//                    nor at N = 8192 (10 % slower: 15.5 warps per SM either
//                    way, and half the bytes in flight per warp).
//   <1, 1, 1, 8, 4>  bf16 (fp16's magic-form build spills at 64
//                    registers): 16 rows × 8 warps, 4 blocks per SM, where
//                    the 32-row blocks are at most one wave (N ≤ 64·SMs)
//                    and K ≤ kShortRowsMaxK: twice the warps per SM
//                    where 8-warp blocks of 32 rows leave them at 8–16.
//                    H200 at f4ceb9d (scratch build, two rounds in one call,
//                    bench/results/wonly-h200-decode-shapes-small-n.json),
//                    W4 g128, M = 1 / 4 / 8, plain, µs: (4096, 4096) 11.4 /
//                    11.6 / 11.9 → 10.2 / 10.6 / 11.2, (6144, 4096) 13.3 /
//                    13.8 / 14.4 → 11.6 / 12.4 / 13.2, (5120, 5120) 14.5 /
//                    14.8 / 15.6 → 12.3 / 13.2 / 14.1, (1024, 4096) 10.8 →
//                    8.7 (every variant and M of these five weights and
//                    (3072, 4096) faster). Not at K ≥ 8192 (M = 4–8 on
//                    (4224, 8192) and (4096, 11008 / 14336) 2–11 % slower:
//                    each block re-reads M tokens × K, twice as often as
//                    with 32 rows), nor over more than one wave ((11008,
//                    4096) 15.2 → 15.9 at M = 1, prepacked).
//   <1, 2, 2, 8, 2>  bf16 with fp32 parameters, in place of <1, 2, 1, 8>: 32
//                    rows × 8 warps at two per SM (128 registers), the next K
//                    tile's weight and parameters in flight during this
//                    one's math (depth 2). H200 at 7516a92 (scratch build,
//                    two rounds in one call, bench/results/
//                    wonly-h200-decode-pipelined-ab.json), W4 g128 µs, plain
//                    / prepacked group-major: M = 8 (8192, 8192) 21.5 / 18.4
//                    → 21.0 / 18.0, (4096, 14336) 20.1 / 17.9 → 19.8 / 17.6,
//                    (28672, 8192) 64.3 / 51.4 → 60.8 / 49.7; M = 1 / 4 on
//                    (8192, 8192) and (4096, 14336) 1–5 % faster. Not at
//                    M ≤ 4 where the 16-row shapes run (4–14 % slower).
//   <1, 2, 2, 4, 4>  fp32 parameters (bf16 and fp16), M = 5–8 where the
//                    weight has more than two 32-row blocks per SM: 32 rows
//                    × 4 warps at four per SM (128 registers), depth 2.
//                    Same call, bf16, M = 8: (11008, 4096) 20.0 / 17.3 →
//                    17.9 / 15.6 µs, (28672, 8192) 64.3 / 51.4 → 61.5 /
//                    47.0, (57344, 8192) 113.0 / 94.3 → 108.0 / 86.5; on
//                    fewer blocks 4–26 % slower than the 8-warp shape
//                    ((4096, 14336) 19.8 → 27.0). fp16 (00f9838 with a
//                    scratch fp16 bench, bench/results/
//                    wonly-h200-decode-fp16-depth2-ab.json), M = 5 / 8
//                    against <1, 2, 1, 8>: (11008, 4096) 21.0 / 21.4 →
//                    17.8 / 18.2 plain, (57344, 8192) 101.7 / 103.7 →
//                    95.4 / 96.8 prepacked, (28672, 8192) −1…+4 %; the
//                    8-warp depth-2 shape was 1–4 % slower than depth 1 for
//                    fp16, which keeps <1, 2, 1, 8> elsewhere.
//   Both: fp32 parameters only. With 16-bit ones (same call) the 8-warp
//   shape was 3–6 % slower at M = 1–8 on (4096, 14336) and (8192, 8192)
//   (prepacked, M = 1: 16.7 / 17.6 µs → 17.6 / 18.2) and the 4-warp one at
//   M = 8 on (28672, 8192) (prepacked 53.1 → 56.7); not profiled. Depth 2
//   of the 16-row M ≤ 4 shape (6 or 7 blocks per SM: 80 / 72 registers, the
//   latter spilling), of the M = 9–16 shapes, and the next tile's row tiles
//   loaded one by one after their math were slower everywhere
//   (docs/weight_only.md, "The next K tile in flight"); with the 32-bit
//   offsets the 16-row shape at depth 2 fits 7 blocks per SM (72 registers,
//   8 bytes spilled) and was still up to 7 % slower than at depth 1 (8
//   blocks), but for the plain layout on (28672, 8192) (M = 1 / 4 2.5 / 4 %
//   faster; bench/results/wonly-h200-offsets32-ab2-try-depth2-16row-*.json).
// M ≤ 8, int8:
//   <1, 1, 1, 8, 4>  16 rows, 61 registers, 32 warps per SM (fp16 needed 80
//                    registers, 3 blocks, before the 32-bit offsets; 56,
//                    4 blocks, since): (28672, 8192) 96 → 90.8 µs at
//                    M = 1–8 against <1, 1, 2, 8, 3>; (8192, 8192) 37.5 →
//                    29.5, (57344, 8192) 181 → 167, (4096, 11008) 26.3 →
//                    23.1; 2 % slower at (4096, 4096) and (11008, 4096).
// M ≤ 16, int4, by how 32-row blocks fill the SMs (bf16: first the
// occupancy rule below):
//   <2, 2, 1, 8, 2>  bf16, N ≤ 96·SMs: 32 rows × 8 warps, 128 registers,
//                    two blocks per SM, where its grid (after its split of
//                    K) is one wave with more resident warps per SM than
//                    the shape below would have, or as many and no more
//                    work on its busiest SM (grid_load). H200 at
//                    b544481 (scratch build, two rounds in one call,
//                    bench/results/wonly-h200-decode-shapes-m9-16.json),
//                    W4 g128 plain, M = 9 / 16, µs: (8192, 8192) 28.5 /
//                    29.2 → 23.6 / 25.3 (7.8 → 15.5 warps per SM), (4096,
//                    11008) 21.3 / 21.4 → 18.9 / 20.5, (4096, 14336) 25.5 /
//                    26.3 → 22.3 / 23.5 (no split of K → two); where the
//                    warps per SM tie ((4096, 4096), (3072, 4096), (2048,
//                    8192), (5120, 5120), (6144, 4096)) it was 0–7 % slower,
//                    over two waves ((11008, 4096), (14336, 4096)) 11–37 %.
//   <2, 2, 1, 8>     ≤ 1 per SM (N ≤ 32·SMs): twice the blocks of 64 rows,
//                    with twice the warps (cbc573d, M = 16: (4096, 4096)
//                    13.7 → 11.4 µs, (4096, 11008) 30.2 → 21.0).
//   <2, 2, 1, 4, 3>  one wave of 3 per SM (N ≤ 96·SMs): 144 registers, 12
//                    warps per SM when measured (127–128 and four blocks,
//                    16 warps, since the 32-bit offsets). M = 9–16:
//                    (11008, 4096) 24.2–24.8 → 20.8–21.8 µs, (8192, 8192)
//                    30.2–31.0 → 28.4–28.7, (6144, 4096) 19.9 → 15.7.
//                    Also at any N with group-major parameters, against
//                    the 64-row shape below: H200 at 415fd47 (scratch
//                    build, two rounds in one call, bench/results/
//                    wonly-h200-m16-shapes-ab-*.json), bf16, W4 g128
//                    prepacked group-major fp32, M = 9 / 16 µs: (28672,
//                    8192) 61.0 / 61.8 → 52.1 / 55.4, (57344, 8192) 114.2
//                    / 116.5 → 95.2 / 100.4, (16384, 4096) 20.9 / 21.0 →
//                    19.8 / 20.6; plain group-major 3–14 % faster. fp16
//                    and 16-bit parameters (faef5e5, scratch switch, two
//                    processes per arm, bench/results/
//                    wonly-h200-m16-gm16-ab-*.json), M = 9 / 16 µs: fp16
//                    prepacked fp16-params (57344, 8192) 122.3 / 124.7 →
//                    100.2 / 104.6, (28672, 8192) 64.2 / 65.4 → 55.5 /
//                    59.9, (14336, 4096) 21.5 / 21.7 → 20.0 / 21.2 (every
//                    fp16 variant 2–19 % faster); bf16 bf16-params 0–11 %
//                    faster but for prepacked ones at M = 12–16 on (14336,
//                    4096) and (16384, 4096): 2–3 % slower. And for fp16
//                    with row-major parameters (same call as the next
//                    sentence, bench/results/wonly-h200-m16-rm-ab-*.json),
//                    M = 9 / 12 / 16: prepacked fp32 (57344, 8192) 131.2
//                    / 132.6 / 134.0 → 112.1 / 115.1 / 121.8 µs, every
//                    fp16 variant 0–15 % faster at M = 9–12 on all four
//                    weights (none slower), at M = 16 9 % faster to 4 %
//                    slower (the slower: (14336, 4096) and (16384, 4096),
//                    2.5–4 %, and (28672, 8192), 1–2 %). Not bf16 with row-major
//                    parameters: up to 8 % faster at M = 9–12 on (57344,
//                    8192), up to 8 % slower at M = 16 on the other three
//                    (bf16 fp32 before, at 415fd47: the same).
//   <2, 4, 1, 4>     bf16, more: 64 rows, 208–217 registers (8 warps per SM;
//                    232 before the 32-bit offsets; at 3 blocks per SM, 168
//                    registers and ~44 bytes spilled, it was 12–19 % slower
//                    on (28672, 8192) and (14336, 4096) and 3–6 % faster on
//                    (57344, 8192): bench/results/
//                    wonly-h200-offsets32-ab2-try-64row-3blocks-*.json), half the
//                    activation re-reads from L2 of 32-row blocks: 71–77 µs
//                    on (28672, 8192), where <2, 2, 1, 4, 3> takes 80–82.
// M ≤ 16, int8, whichever fills its last wave of blocks better (both
// unsplit; a tie takes the second):
//   <2, 2, 1, 8, 2>  32 rows, ≤ 128 registers for 2 blocks/SM: 98 µs on
//                    (28672, 8192) (64 rows: 113 µs).
//   <2, 1, 1, 8, 4>  bf16 / <2, 1, 1, 8, 3> fp16: 16 rows, four blocks per
//                    SM (64 registers; bf16's bound to it with 8 bytes
//                    spilled outside the loop, 72 registers and 3 blocks
//                    at the bound of 3; fp16's 64 at that bound, without
//                    spilling, which 4 would force). Before the 32-bit
//                    offsets 75 registers, 3 blocks. H100, M = 9–16:
//                    (11008, 4096) 28.3 → 24.8 µs (344 32-row blocks on 264
//                    slots fill 65 % of their last wave, 688 16-row blocks
//                    on 396 slots 87 %); the wave fill also keeps the first
//                    shape where it measured faster: (8192, 8192) 31.7 against
//                    38.4, (57344, 8192) 182 against 188.
// M = 17–32 (four n8 token blocks: one launch reads the weight once for 32
// tokens, where two M ≤ 16 launches read it twice; the dispatch rows of
// wonly_dispatch.cu say where), H100 at 03bc88f, W4 g128 M = 17 / 32, µs,
// against <4, 1, 1, 8, 2> (bench/results/wonly-h100-m17-32-four-blocks.json):
//   int4 <4, 2, 1, 4, 2>  32 rows × 4 warps, where the weight has more than
//                         SMs/2 32-row blocks: (4096, 4096) 15.7 / 16.1
//                         against 16.9 / 18.4 (cuBLAS bf16 17.0), (4096,
//                         11008) 26.4 / 27.4 against 32.7 / 36.9, (28672,
//                         8192) 109.9 / 122.8 against 164.6 / 187.6 (which
//                         spilled: 128 registers at 2 blocks per SM).
//   int4 <4, 1, 1, 8, 1>  16 rows × 8 warps on fewer (small grids): (2048,
//                         8192) 16.4 / 17.7 against 22.5 / 23.6 for the
//                         32-row shape (cuBLAS 19.2 / 18.5).
//   int8 <4, 1, 1, 8, 2>  16 rows × 8 warps, 108 registers: (4096, 4096)
//                         14.1 / 14.3 µs (cuBLAS 16.8), (11008, 4096) 31.3 /
//                         32.5 (37.8 / 38.7).
constexpr int kManyRowsWarpsPerSm = 20;
constexpr int64_t kShortRowsMaxK = 6144;

// blocks / (slots · rounds): how full the rounds of `slots` resident blocks are.
inline double wave_fill(int64_t blocks, int64_t slots) {
  const int64_t rounds = (blocks + slots - 1) / slots;
  return static_cast<double>(blocks) / static_cast<double>(slots * rounds);
}

// The two int8 M ≤ 16 shapes <2, kTiles, 1, 8, kMinBlocks> (table above):
// 32 rows at 2 blocks/SM, 16 rows at 4 (fp16's reaches 4 at a bound of 3).
constexpr int kInt8TallTiles = 2, kInt8TallMinBlocks = 2;
constexpr int kInt8ShortTiles = 1;
template <bool kBf16>
constexpr int kInt8ShortMinBlocks = kBf16 ? 4 : 3;  // both 4 resident (table above)

// int8, M ≤ 16: the 16-row shape where neither shape splits K and its
// blocks fill their last wave at least as well as the 32-row shape's. The
// 16-row shape fits 4 blocks per SM, twice the 32-row shape's 2, so on most
// N both fill their waves alike, and the tie goes to the 16-row shape:
// - fp16 (64 registers since the 32-bit offsets): at M = 9 / 16 12–13 %
//   faster on (11008, 4096) and (5120, 5120) (H200, bench/results/
//   wonly-h200-offsets32-fp16-ab-*.json).
// - bf16 (bound to 4 blocks since 2026-11-30; at 3 it tied only at 144–192·SMs
//   rows, where the 32-row shape was 2.5–6.5 % faster, bench/results/
//   wonly-h200-int8-tie-bf16-ab-*.json): against the 3-block build and its
//   tie rule, same call, W8 per channel M = 9 / 16, µs (bench/results/
//   wonly-h200-i8-4blocks-ab-*.json): (28672, 8192) plain 86.7 / 88.4 →
//   80.0 / 81.6 (3-block 16-row blocks before), (14336, 4096) prepacked
//   25.3 / 25.5 → 23.0 / 23.3 and (57344, 8192) plain 159.1 / 160.7 →
//   149.3 / 153.9 (32-row before), (8192, 8192), (20480, 4096), (24576,
//   4096) 2–5 % faster; slower where the 3-block build filled its waves
//   better: (5120, 5120) 2–3 %, (11008, 4096) plain 2.5–4 % (prepacked ±0.5 %).
template <bool kBf16, bool kParams16>
bool int8_short_blocks_fill_better(const WeightOnlyArgs& args) {
  const GemvGrid tall = gemv_grid<kBf16, kParams16, false, 2, kInt8TallTiles, 1, 8, kInt8TallMinBlocks>(args);
  const GemvGrid short_ = gemv_grid<kBf16, kParams16, false, 2, kInt8ShortTiles, 1, 8, kInt8ShortMinBlocks<kBf16>>(args);
  const bool unsplit = 2 * tall.blocks > tall.resident && 2 * short_.blocks > short_.resident;  // split_k_factor's bound
  const double short_fill = wave_fill(short_.blocks, short_.resident), tall_fill = wave_fill(tall.blocks, tall.resident);
  return unsplit && short_fill >= tall_fill;
}

// How a shape's grid (after its split of K) loads the SMs: its resident
// warps per SM, averaged over its waves; whether it is one wave; and the
// work of the busiest SM, in blocks' worth of whole-K work (CTAs on that SM
// / splits), which is what an uneven grid waits for.
struct GridLoad {
  double warps_per_sm;
  bool one_wave;
  double busiest_sm;
};
template <bool kBf16, bool kParams16, bool kInt4, int kTokenBlocks, int kTiles, int kDepth, int kWarps, int kMinBlocks>
GridLoad grid_load(const WeightOnlyArgs& args, int64_t sm_count) {
  const GemvGrid grid = gemv_grid<kBf16, kParams16, kInt4, kTokenBlocks, kTiles, kDepth, kWarps, kMinBlocks>(args);
  const int64_t ctas = grid.blocks * grid.splits;
  const int64_t waves = (ctas + grid.resident - 1) / grid.resident;
  const int64_t busiest = (ctas + sm_count - 1) / sm_count;
  return {static_cast<double>(ctas * kWarps) / static_cast<double>(sm_count * waves), waves == 1,
          static_cast<double>(busiest) / grid.splits};
}

// bf16 int4, M = 9–16, where the table's shape is one of 32 rows (<2, 2,
// 1, 8> at one block per SM, or <2, 2, 1, 4, 3>): <2, 2, 1, 8, 2> (32 rows
// × 8 warps at 128 registers, two blocks per SM; fp16's build, 127
// registers without spilling since the 32-bit offsets, was 1–4 % slower on
// most such weights, bench/results/wonly-h200-fp16-wide-ab-*.json) where
// its grid is one wave with more warps per SM, or as many and
// no more work on its busiest SM. The tie, on the H200 once the 32-bit
// offsets fit <2, 2, 1, 4, 3> four to an SM (so that it splits K where it
// did not; bench/results/wonly-h200-offsets32-*.json), M = 9 / 16, both shapes 15.5 (8192, 8192) or 9.7 (5120, 5120)
// warps per SM: on (8192, 8192) the wide shape's 256 unsplit blocks (2 on
// the busiest SM) were 2–4 % faster than the table's 512 half-K CTAs (4,
// i.e. 2 blocks' work); on (5120, 5120) its 160 blocks (2) 2–5 % slower than
// 320 half-K CTAs (3, i.e. 1.5).
template <bool kBf16, bool kParams16>
bool int4_two_wide_blocks_fill_more(const WeightOnlyArgs& args, int64_t sm_count, bool one_per_sm) {
  const GridLoad wide = grid_load<kBf16, kParams16, true, 2, 2, 1, 8, 2>(args, sm_count);
  const GridLoad table = one_per_sm ? grid_load<kBf16, kParams16, true, 2, 2, 1, 8, 1>(args, sm_count)
                                    : grid_load<kBf16, kParams16, true, 2, 2, 1, 4, 3>(args, sm_count);
  return wide.one_wave && (wide.warps_per_sm > table.warps_per_sm ||
                           (wide.warps_per_sm == table.warps_per_sm && wide.busiest_sm <= table.busiest_sm));
}

template <bool kBf16, bool kParams16, bool kInt4>
void launch(const WeightOnlyArgs& args, int token_blocks) {
  const int64_t sm_count = cuda_device_info(args.device.index).sm_count;
  const int64_t blocks_32_rows = (args.n + 31) / 32;  // int4's shapes go by it
  if (token_blocks == 4) {
    if constexpr (kInt4) {
      if (2 * blocks_32_rows <= sm_count) {
        launch_variant<kBf16, kParams16, kInt4, 4, 1, 1, 8, 1>(args);
      } else {
        launch_variant<kBf16, kParams16, kInt4, 4, 2, 1, 4, 2>(args);
      }
    } else {
      launch_variant<kBf16, kParams16, kInt4, 4, 1, 1, 8, 2>(args);
    }
  } else if (token_blocks == 1) {
    if constexpr (kInt4) {
      const int64_t warps_16_rows = (args.n + 15) / 16 * 4;  // 16-row blocks of 4 warps
      if (args.m <= 4 && warps_16_rows >= kManyRowsWarpsPerSm * sm_count) {
        launch_variant<kBf16, kParams16, kInt4, 1, 1, 1, 4, 7>(args);
      } else if (kBf16 && blocks_32_rows <= 2 * sm_count && args.k <= kShortRowsMaxK) {
        launch_variant<true, kParams16, kInt4, 1, 1, 1, 8, 4>(args);  // kBf16: no fp16 build of it
      } else if constexpr (!kParams16) {  // depth 2 with fp32 parameters (table above)
        if (args.m > 4 && blocks_32_rows > 2 * sm_count) {
          launch_variant<kBf16, kParams16, kInt4, 1, 2, 2, 4, 4>(args);
        } else if constexpr (kBf16) {
          launch_variant<true, kParams16, kInt4, 1, 2, 2, 8, 2>(args);
        } else {
          launch_variant<kBf16, kParams16, kInt4, 1, 2, 1, 8>(args);
        }
      } else {
        launch_variant<kBf16, kParams16, kInt4, 1, 2, 1, 8>(args);
      }
    } else {
      launch_variant<kBf16, kParams16, kInt4, 1, 1, 1, 8, kBf16 ? 4 : 3>(args);
    }
  } else if constexpr (kInt4) {
    if (kBf16 && blocks_32_rows <= 3 * sm_count &&
        int4_two_wide_blocks_fill_more<true, kParams16>(args, sm_count, blocks_32_rows <= sm_count)) {
      launch_variant<true, kParams16, kInt4, 2, 2, 1, 8, 2>(args);  // kBf16: no fp16 build of it
    } else if (blocks_32_rows <= sm_count) {
      launch_variant<kBf16, kParams16, kInt4, 2, 2, 1, 8>(args);
    } else if (blocks_32_rows <= 3 * sm_count || args.params_group_stride != 1 || !kBf16) {
      launch_variant<kBf16, kParams16, kInt4, 2, 2, 1, 4, 3>(args);  // group-major parameters or fp16: any N
    } else if constexpr (kBf16) {
      launch_variant<true, kParams16, kInt4, 2, 4, 1, 4>(args);  // kBf16: no fp16 build of it
    }
  } else if (int8_short_blocks_fill_better<kBf16, kParams16>(args)) {
    launch_variant<kBf16, kParams16, kInt4, 2, kInt8ShortTiles, 1, 8, kInt8ShortMinBlocks<kBf16>>(args);
  } else {
    launch_variant<kBf16, kParams16, kInt4, 2, kInt8TallTiles, 1, 8, kInt8TallMinBlocks>(args);
  }
  QGEMM_CUDA_CHECK(cudaGetLastError());
}

// Parameters fp32 or 16-bit: separate builds, so that the fp32 loop keeps its
// code (one runtime branch per parameter load made its loads issue in smaller
// batches: M = 16 on (28672, 8192) 76 → 89 µs).
template <bool kBf16, bool kInt4>
void launch_params(const WeightOnlyArgs& args, int token_blocks) {
  if (args.params16) launch<kBf16, true, kInt4>(args, token_blocks);
  else launch<kBf16, false, kInt4>(args, token_blocks);
}

}  // namespace

// The cursor's 32-bit byte offsets (Cursor above) must hold the last byte
// each load reads from the arguments' pointers: weights up to 4 GiB, and the
// like for the parameters and the activations. Larger calls are refused
// before anything is launched.
namespace {
void check_gemv_offsets(const WeightOnlyArgs& args) {
  constexpr int64_t kLimit = int64_t{1} << 32;
  const int64_t param_bytes = args.params16 ? 2 : 4;
  const int64_t groups = args.k / args.group_size;
  const int64_t ld_params = std::max(args.ld_scales, args.offsets ? args.ld_offsets : 0);
  const struct {
    const char* what;
    int64_t bytes;
  } spans[] = {
      {"w", args.w_addr.chunk_offset(args.n - 1, args.chunks_per_row() - 1) + 16},
      {"scales and offsets", ((args.n - 1) * ld_params + (groups - 1) * args.params_group_stride + 1) * param_bytes},
      {"a", ((args.m - 1) * args.lda + args.k) * 2},
  };
  for (const auto& span : spans) {
    if (span.bytes > kLimit) {
      throw Error(ErrorKind::kValue, std::string("weight_only_mm: the decode kernel (M <= 32) reads ") + span.what +
                                         " through 32-bit offsets, up to 4 GiB; this call spans " +
                                         std::to_string(span.bytes) + " bytes of it");
    }
  }
}
}  // namespace

void launch_wonly_gemv(const WeightOnlyArgs& args, int token_blocks) {
  check_gemv_offsets(args);
  const bool bf16 = args.dtype == DType::kBFloat16;
  if (bf16 && args.int4) launch_params<true, true>(args, token_blocks);
  else if (bf16) launch_params<true, false>(args, token_blocks);
  else if (args.int4) launch_params<false, true>(args, token_blocks);
  else launch_params<false, false>(args, token_blocks);
}

}  // namespace qgemm::detail
