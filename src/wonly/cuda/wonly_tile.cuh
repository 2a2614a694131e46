// wonly_tile.cuh — the block-tile machinery of the two tensor-core
// weight-only kernels (wonly_mma.cu: mma.sync, sm_80+; wonly_wgmma.cu:
// wgmma, sm_90a). Both kernels have 256 threads and a block tile of
// kBN = 128 weight rows × kBM tokens × kBK = 64 k, and share the split-K
// epilogue inside a cluster, the block tile order and the coalesced output
// store. The cp.async load plan is wonly_mma's (wonly_wgmma loads by TMA;
// both kernels copy the scales and offsets per block of two groups,
// wonly_param_blocks.cuh): its ring slot (`Stage`) holds
//   act  [kBM tokens][64 k] T   16-byte chunks; tokens past M, k past K zero-filled
//   raw  [128 rows][32 | 64] B  the weight's 16-byte chunks (int4 | int8), as stored
// and says where chunk c of token / row r goes (act_offset, raw_offset).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/cuda_smem.cuh"
#include "wonly/cuda/wonly_device.cuh"
#include "wonly/cuda/wonly_split_k.cuh"

namespace qgemm::detail::wonly {

constexpr int kTileThreads = 256;
constexpr int kTileRows = 128;  // kBN
constexpr int kTileK = 64;      // kBK

// 16 bytes (L2 only) to shared address `dst`, or zeros when !fill (src must
// still be a valid address).
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, bool fill) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(fill ? 16 : 0));
}

__device__ __forceinline__ void cp_async_4(uint32_t dst, const void* src, bool fill) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(fill ? 4 : 0));
}

// The group of element k is k >> element_group_shift(args): group sizes are
// powers of two ≥ 32, or K (per channel: 31, so every k < 2^30 is in group 0).
__device__ __forceinline__ int element_group_shift(const WeightOnlyArgs& args) {
  return args.group_size == args.k ? 31 : __ffs(static_cast<int>(args.group_size)) - 1;
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

// What one thread copies per k tile, fixed for the whole loop so that a tile
// costs a few adds per copy (a first version recomputed every address,
// including two 64-bit divisions, and spent ~500 instructions per warp and
// tile on it). Thread i copies
//   act: column chunk i%8 of tokens i/8 + 32j          (j < kBM/32)
//   raw: chunk i%C of rows i/C + (256/C)j, C = 2 | 4   (j < C/2)
// StageT's layouts must keep act_offset(r + 32j, c) = act_offset(r, c) +
// 32j·kActPitch and likewise for raw rows.
template <class StageT>
struct LoadPlan {
  static constexpr int kBM = StageT::kTokens;
  static constexpr bool kInt4 = StageT::kInt4;
  static constexpr int kActCopies = kBM * 8 / kTileThreads;
  static constexpr int kChunks = StageT::kRawBytes / 16;  // per row and tile
  static constexpr int kRawCopies = kTileRows * kChunks / kTileThreads;
  static constexpr int kElems = kInt4 ? 32 : 16;  // per chunk
  static constexpr uint32_t kActStep = 32 * StageT::kActPitch;                          // 32 tokens
  static constexpr uint32_t kRawStep = (kTileThreads / kChunks) * StageT::kRawBytes;    // rows
  static constexpr uint32_t kActOffset = offsetof(StageT, act), kRawOffset = offsetof(StageT, raw);

  const uint16_t* act;  // token i/8 (clamped into [0, M)), column 8·(i%8)
  int64_t act_step;     // 32 tokens
  uint32_t act_tokens;  // bit j: token of copy j < M
  int act_col;
  const uint8_t* raw[kRawCopies];  // row part of the chunk offset
  int chunk;
  uint32_t act_dst, raw_dst;  // shared addresses in stage 0

  __device__ LoadPlan(const WeightOnlyArgs& args, int64_t token_base, int64_t row_base, uint32_t smem) {
    const int i = threadIdx.x;
    const auto* a = static_cast<const uint16_t*>(args.a);
    act_col = 8 * (i % 8);
    act_step = 32 * args.lda;
    act_tokens = 0;
#pragma unroll
    for (int j = 0; j < kActCopies; ++j) act_tokens |= (token_base + i / 8 + 32 * j < args.m ? 1u : 0u) << j;
    act = a + min(token_base + i / 8, args.m - 1) * args.lda + act_col;
    chunk = i % kChunks;
#pragma unroll
    for (int j = 0; j < kRawCopies; ++j) {
      const int64_t row = min(row_base + i / kChunks + (kTileThreads / kChunks) * j, args.n - 1);  // past N: never stored
      raw[j] = args.w + args.w_addr.chunk_offset(row, 0);
    }
    act_dst = smem + kActOffset + StageT::act_offset(i / 8, i % 8);
    raw_dst = smem + kRawOffset + StageT::raw_offset(i / kChunks, chunk);
  }

  // Issues the copies of k tile `kt` into ring slot `slot` (the caller commits).
  // Halves of the tile at or past K get zero weights (and, from ParamBlocks,
  // zero scales and offsets), so their ŵ = round_T(0·0 + 0) = 0 exactly (an
  // offset past K could be ±inf).
  __device__ __forceinline__ void issue(const WeightOnlyArgs& args, int kt, int slot) const {
    const uint32_t base = slot * static_cast<uint32_t>(sizeof(StageT));
    const int k0 = kt * kTileK, k = static_cast<int>(args.k);
    const bool col_inside = k0 + act_col < k;
#pragma unroll
    for (int j = 0; j < kActCopies; ++j) {
      const bool fill = col_inside && ((act_tokens >> j) & 1u);
      cp_async_16(base + act_dst + j * kActStep, fill ? act + j * act_step + k0 : act, fill);
    }
    const int c = kt * kChunks + chunk;  // chunk index along the row
    const int64_t c_offset = (c >> 2) * args.w_addr.tile_stride + (c & 3) * 16;
    const bool chunk_inside = c * kElems < k;
#pragma unroll
    for (int j = 0; j < kRawCopies; ++j) {
      cp_async_16(base + raw_dst + j * kRawStep, chunk_inside ? raw[j] + c_offset : raw[j], chunk_inside);
    }
  }
};

// Whether n8 token block nb of a warp whose tokens start at warp_tokens is
// one of the tile's token blocks [block_lo, block_hi) (8 tokens each).
__device__ __forceinline__ bool in_token_blocks(int warp_tokens, int nb, int block_lo, int block_hi) {
  const int block = warp_tokens / 8 + nb;
  return !(block < block_lo || block >= block_hi);
}

// Epilogue: out[token, row] = round_T(acc + bias[row]) (wonly_math.h). The
// accumulators (rows g, g+8 × tokens 2t, 2t+1 of each m16 × n8 tile: the
// mma.sync C fragment, and per warp the wgmma D fragment too) are rounded
// into a [kBM tokens][128 rows] T tile in shared memory (pitch 136: the four
// token rows a warp's store touches land 8 banks apart), then written to
// global memory 8 outputs (16 bytes) per store; element stores at the N edge
// or when the output rows are not 16-byte aligned.
// Only the tile's token blocks [block_lo, block_hi) (8 tokens each) are
// written: a split-K cluster stores its tile in slices (reduce_and_store_split_k).
template <bool kBf16, int kBM, int kMT, int kNB>
__device__ __forceinline__ void store_tile(const WeightOnlyArgs& args, const float (&acc)[kMT][kNB][4],
                                           unsigned char* smem, int64_t token_base, int64_t row_base,
                                           int warp_rows, int warp_tokens, int g, int t, int block_lo = 0,
                                           int block_hi = kBM / 8) {
  constexpr int kOutLd = kTileRows + 8;
  auto* tile = reinterpret_cast<uint16_t(*)[kOutLd]>(smem);
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = warp_rows + 16 * mt + g + 8 * h;
      const int64_t row = min(row_base + r, args.n - 1);
      const bool has_bias = args.bias != nullptr;
      const float bias = has_bias ? load_act<kBf16>(args.bias, row) : 0.0f;
#pragma unroll
      for (int nb = 0; nb < kNB; ++nb) {
        if (!in_token_blocks(warp_tokens, nb, block_lo, block_hi)) continue;
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          tile[warp_tokens + 8 * nb + 2 * t + e][r] = output_bits<kBf16>(acc[mt][nb][2 * h + e], has_bias, bias);
        }
      }
    }
  }
  __syncthreads();
  auto* out = static_cast<uint16_t*>(args.out);
  const bool vector_ok = ((reinterpret_cast<uintptr_t>(out) | static_cast<uintptr_t>(args.ldo * 2)) & 15) == 0;
  const int first = 8 * block_lo * (kTileRows / 8), last = 8 * block_hi * (kTileRows / 8);
#pragma unroll
  for (int i = first + threadIdx.x; i < last; i += kTileThreads) {
    const int r = i / (kTileRows / 8), c = i % (kTileRows / 8);
    const int64_t token = token_base + r, row = row_base + 8 * c;
    if (token >= args.m || row >= args.n) continue;
    uint16_t* dst = out + token * args.ldo + row;
    if (vector_ok && row + 8 <= args.n) {
      *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(&tile[r][8 * c]);
    } else {
      for (int j = 0; j < 8 && row + j < args.n; ++j) dst[j] = tile[r][8 * c + j];
    }
  }
}

// Bytes of shared memory store_tile and reduce_and_store_split_k need.
template <int kBM, int kAccRegs>
constexpr int epilogue_smem_bytes() {
  const int tile = kBM * (kTileRows + 8) * 2, partial = kAccRegs * kTileThreads * 4;
  return tile > partial ? tile : partial;
}

// Split-K epilogue inside a thread-block cluster (sm_90): every CTA leaves
// its partial sums in its own shared memory, laid out [register][thread]
// (consecutive threads, consecutive words). Then each CTA takes an equal
// slice of the tile's token blocks (rank r: blocks [r·B/S, (r+1)·B/S) of
// B = kBM/8, S = the cluster's CTAs), adds the partials of ranks 0, 1, …,
// S−1 in that order through distributed shared memory — a fixed order, so
// the result is deterministic and the same as one CTA adding all ranks into
// rank 0's sums — and stores that slice of the output tile. The DSMEM reads
// and the epilogue are spread over the S CTAs (rank 0 alone adding S−1
// peers kept 7 of 8 CTAs waiting at the cluster barrier: 43 % of the warp
// stall samples at (N, K) = (4096, 4096), M = 64). The second cluster
// barrier keeps every partial alive until all slices have read it; only
// then is the shared memory reused for the output tile. No global
// workspace, no atomics.
template <bool kBf16, int kBM, int kMT, int kNB>
__device__ __forceinline__ void reduce_and_store_split_k(const WeightOnlyArgs& args, float (&acc)[kMT][kNB][4],
                                                         unsigned char* smem, int64_t token_base, int64_t row_base,
                                                         int warp_rows, int warp_tokens, int g, int t) {
  constexpr int kRegs = kMT * kNB * 4;
  float* partial = reinterpret_cast<float*>(smem);
  float* flat = &acc[0][0][0];
#pragma unroll
  for (int i = 0; i < kRegs; ++i) partial[i * kTileThreads + threadIdx.x] = flat[i];
  cluster_sync();
  const int splits = static_cast<int>(gridDim.z), rank = static_cast<int>(cluster_rank());
  const int block_lo = rank * (kBM / 8) / splits, block_hi = (rank + 1) * (kBM / 8) / splits;
  // Peers outer, registers inner: one peer's loads are independent, so they
  // are all in flight at once (a register's chain over the peers would pay
  // the DSMEM latency once per peer and register).
  for (int peer = 0; peer < splits; ++peer) {
    const float* remote = cluster_peer(partial, static_cast<unsigned>(peer)) + threadIdx.x;
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
      for (int nb = 0; nb < kNB; ++nb) {
        if (!in_token_blocks(warp_tokens, nb, block_lo, block_hi)) continue;
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float v = remote[((mt * kNB + nb) * 4 + e) * kTileThreads];
          acc[mt][nb][e] = peer == 0 ? v : acc[mt][nb][e] + v;
        }
      }
    }
  }
  cluster_sync();
  store_tile<kBf16, kBM, kMT, kNB>(args, acc, smem, token_base, row_base, warp_rows, warp_tokens, g, t, block_lo,
                                   block_hi);
}

// Block tile order. The grid is (token tiles, row tiles, splits); CTAs are
// launched in linear order (x fastest), and this maps the linear index so
// that token tiles come in bands of `band`: a band sweeps every weight row
// tile with its `band` token tiles in consecutive CTAs. So the CTAs that
// share a weight tile run together (it comes from DRAM once per band) and a
// band's activations stay in L2 while it sweeps the weight (`band_for`).
// With band ≥ gridDim.x this is the plain order (blockIdx.x, blockIdx.y).
// The stream-K kernel (wonly_stream_k.h) walks the same order by tile index.
struct TileCoord {
  int64_t token_tile, row_tile;
  // Tile `linear` of `columns` token tiles × `rows` row tiles.
  __device__ TileCoord(int64_t linear, int64_t columns, int64_t rows, int band) {
    const int64_t per_band = static_cast<int64_t>(band) * rows;
    const int64_t first = linear / per_band * band, index = linear % per_band;
    const int64_t width = min(static_cast<int64_t>(band), columns - first);
    token_tile = first + index % width;
    row_tile = index / width;
  }
  __device__ explicit TileCoord(int band)
      : TileCoord(blockIdx.x + static_cast<int64_t>(gridDim.x) * blockIdx.y, gridDim.x, gridDim.y, band) {}
};

// Token tiles per band: as many as keep the band's activations (tokens × K,
// 2 bytes each) within 16 MB, a third of an H100's L2 — the weight streams
// through the rest. At least 1.
inline int band_for(int block_m, int64_t k) {
  const int64_t bytes_per_tile = static_cast<int64_t>(block_m) * k * 2;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(1 << 20, (int64_t{16} << 20) / bytes_per_tile)));
}

// The k-tile range [kt_begin, kt_end) of split blockIdx.z of gridDim.z.
struct SplitRange {
  int begin, end;
  __device__ explicit SplitRange(int64_t k) {
    const int k_tiles = static_cast<int>((k + kTileK - 1) / kTileK);
    const int per_split = (k_tiles + static_cast<int>(gridDim.z) - 1) / static_cast<int>(gridDim.z);
    begin = min(k_tiles, static_cast<int>(blockIdx.z) * per_split);
    end = min(k_tiles, begin + per_split);
  }
};

}  // namespace qgemm::detail::wonly
