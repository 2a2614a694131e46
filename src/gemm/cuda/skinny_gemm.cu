// Skinny scaled GEMM for M ≤ 64 (decode batches): the weight B is read once,
// with 16-byte loads spread over every SM, and the few activation rows ride
// along. Runs on sm_80+ for int8 and sm_89+ for fp8 (mma.sync only).
//
// Work split: one CTA per column tile of 8·kNTiles columns (no split-K
// across CTAs, no workspace); its kWarps warps split K: warp w takes the
// 64-element K chunks w, w+kWarps, … and the partial sums are added in
// shared memory in a fixed order (deterministic). Each warp keeps kDepth
// chunks in flight in a rotating register ring: a slot is refilled with the
// chunk kDepth steps ahead right after its MMAs.
// M ≤ 16 (launch_decode): 16-column tiles and a persistent grid (at most the
// resident CTAs, each looping over tiles, the next tile's first chunks
// loaded before this tile's reduction); M ≤ 32 / 64: one CTA per 32 columns.
//
// Per 64-element chunk, lane (g = lane/4, t = lane%4) loads 16 bytes at
// k = k0 + 16t of: B column n0 + 8j + g for j < kNTiles, and A rows 16f + g and
// 16f + g + 8 for each 16-row fragment f. The 16 bytes are four 4-byte words
// w0..w3, fed to two m16n8k32 MMAs as
//     MMA 1: a = {A_g.w0, A_g8.w0, A_g.w1, A_g8.w1},  b = {B.w0, B.w1}
//     MMA 2: a = {A_g.w2, A_g8.w2, A_g.w3, A_g8.w3},  b = {B.w2, B.w3}
// The MMA's k index (4t + i for a0/a1/b0, 16 + 4t + i for a2/a3/b1) thus maps
// to the same physical k for A and B, so each MMA sums a permutation of the
// chunk's 32 products: the dot product is unchanged (exactly, for int8).
//
// Transposed (kTransposed, the M ≤ 8 decode kernels): the MMA computes the
// tile of Dᵀ = B·Aᵀ instead, with 16 weight columns as its 16 rows and the ≤ 8
// tokens as its 8 columns — the same loads and word order with the roles of
// A and B swapped (lane loads weight columns n0 + g and n0 + g + 8, token g).
// One m16n8k32 then serves 16 columns where the plain form needs two (whose
// 16-row A fragments are half padding at M ≤ 8): half the MMAs, and for fp8
// on sm_90, which lowers each e4m3 m16n8k32 to F2FP conversions and two
// HMMA.16816, half of those too.
//
// Epilogue: gemm/epilogue_math.h, as in the CPU backend and the fallback
// (skinny_common.cuh). On sm_90, M ≤ 16 runs skinny_stream_sm90.cu, whose
// weight stages arrive in shared memory by bulk copies.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/cuda_check.h"
#include "core/cuda_launch.cuh"
#include "core/cuda_device_info.h"
#include "core/cuda_kernel_info.h"
#include "gemm/cuda/kernels.h"
#include "gemm/cuda/operand_layout.h"
#include "gemm/cuda/skinny_common.cuh"

namespace qgemm::detail {
namespace {

using skinny::mma_16x8x32;

constexpr int kChunk = 64;  // K elements per warp iteration (16 bytes per lane)

// 16 bytes at p when `valid`, else zeros (an absent row, column or K tail).
__device__ __forceinline__ uint4 load16(const uint8_t* p, bool valid) {
  return valid ? __ldg(reinterpret_cast<const uint4*>(p)) : make_uint4(0, 0, 0, 0);
}
__device__ __forceinline__ uint4 load16_streaming(const uint8_t* p, bool valid) {
  return valid ? __ldcs(reinterpret_cast<const uint4*>(p)) : make_uint4(0, 0, 0, 0);
}

// Output columns per CTA tile: the MMA's columns (8 per n8 tile), or its
// rows (16 per fragment) when transposed.
template <int kMFrags, int kNTiles, bool kTransposed>
constexpr int kTileColumns = kTransposed ? 16 * kMFrags : 8 * kNTiles;

// One K chunk's registers: 16 bytes of each B column tile and of each A
// row half (rows g and g + 8 of every 16-row fragment).
template <int kMFrags, int kNTiles>
struct Chunk {
  uint4 b[kNTiles];
  uint4 a[kMFrags][2];
};

// kMFrags 16-row MMA fragments, kNTiles 8-column MMA tiles: plain, tokens
// are the MMA's rows (M ≤ 16·kMFrags) and weight columns its columns (8·kNTiles
// per CTA tile); transposed (kTransposed), weight columns are its rows
// (16·kMFrags per CTA tile) and tokens its columns (M ≤ 8·kNTiles ≤ 16).
// kWarps warps split K, kDepth chunks in flight per warp: a rotating
// register buffer, each slot refilled with the chunk kDepth steps ahead as
// soon as it has been multiplied, so loads stay in flight during the MMAs
// (16·kDepth·(kNTiles + 2·kMFrags) bytes per lane).
template <int kMFrags, int kNTiles, int kDepth, int kWarps, int kMinBlocks, bool kFp8, bool kTransposed>
__global__ void __launch_bounds__(kWarps * 32, kMinBlocks) skinny_gemm_kernel(const ScaledMmArgs args) {
  wait_for_preceding_grids();
  allow_dependent_launch();
  constexpr int kThreads = kWarps * 32;
  constexpr int kColumns = kTileColumns<kMFrags, kNTiles, kTransposed>;
  // Token rows of the partial sums per reduction pass: plain, one 16-row
  // fragment at a time; transposed, all tokens at once.
  constexpr int kRows = kTransposed ? 8 * kNTiles : 16;
  static_assert(kRows <= 16, "at most 16 tokens per reduction pass");
  __shared__ skinny::Acc<kFp8> partial[kWarps][kRows][kColumns + 1];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const auto* a = static_cast<const uint8_t*>(args.a);
  const auto* b = static_cast<const uint8_t*>(args.b);

  // This lane's 16 bytes of token `row` / weight column `col` (clamped
  // pointers; `ok` masks the loads).
  auto token = [&](int64_t row, bool& ok) {
    ok = row < args.m;
    return a + (ok ? row : 0) * args.lda + 16 * t;
  };
  auto weight = [&](int64_t col, bool& ok) {
    ok = col < args.n;
    return b + (ok ? col : 0) * args.ldb + 16 * t;
  };
  // The MMA's operands: A rows (two per fragment: g and g + 8), B columns.
  const uint8_t* mma_a[kMFrags][2];
  bool mma_a_ok[kMFrags][2];
  const uint8_t* mma_b[kNTiles];
  bool mma_b_ok[kNTiles];
  auto set_columns = [&](int64_t tile) {  // the weight side of column tile `tile`
    if constexpr (kTransposed) {
#pragma unroll
      for (int f = 0; f < kMFrags; ++f)
#pragma unroll
        for (int h = 0; h < 2; ++h) mma_a[f][h] = weight(tile * kColumns + 16 * f + g + 8 * h, mma_a_ok[f][h]);
    } else {
#pragma unroll
      for (int j = 0; j < kNTiles; ++j) mma_b[j] = weight(tile * kColumns + 8 * j + g, mma_b_ok[j]);
    }
  };
  if constexpr (kTransposed) {
#pragma unroll
    for (int j = 0; j < kNTiles; ++j) mma_b[j] = token(8 * j + g, mma_b_ok[j]);
  } else {
#pragma unroll
    for (int f = 0; f < kMFrags; ++f)
#pragma unroll
      for (int h = 0; h < 2; ++h) mma_a[f][h] = token(16 * f + g + 8 * h, mma_a_ok[f][h]);
  }

  // Chunk c of this warp is the CTA's chunk warp + c·kWarps.
  const int64_t chunks = (args.k + kChunk - 1) / kChunk;
  const int64_t my_chunks = (chunks - warp + kWarps - 1) / kWarps;  // may be ≤ 0
  auto load = [&](int64_t c, Chunk<kMFrags, kNTiles>& dst) {
    const int64_t k = (warp + c * kWarps) * kChunk + 16 * t;
    const bool k_ok = k < args.k;  // K % 16 == 0: a lane's 16 bytes are all in or all out
    const int64_t offset = k_ok ? k - 16 * t : 0;
    // The weight is read once: streaming loads; the tokens stay cached.
#pragma unroll
    for (int j = 0; j < kNTiles; ++j) {
      dst.b[j] = kTransposed ? load16(mma_b[j] + offset, k_ok && mma_b_ok[j])
                             : load16_streaming(mma_b[j] + offset, k_ok && mma_b_ok[j]);
    }
#pragma unroll
    for (int f = 0; f < kMFrags; ++f)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        dst.a[f][h] = kTransposed ? load16_streaming(mma_a[f][h] + offset, k_ok && mma_a_ok[f][h])
                                  : load16(mma_a[f][h] + offset, k_ok && mma_a_ok[f][h]);
      }
  };

  // Column tiles blockIdx.x, + gridDim.x, … (persistent when the grid is
  // smaller than the tile count): the next tile's first kDepth chunks are
  // loaded before this tile's reduction, so a tile start does not drain
  // the loads in flight.
  const int64_t tiles = (args.n + kColumns - 1) / kColumns;
  int64_t tile = blockIdx.x;
  set_columns(tile);
  Chunk<kMFrags, kNTiles> buf[kDepth];
#pragma unroll
  for (int i = 0; i < kDepth; ++i) {
    if (i < my_chunks) load(i, buf[i]);
  }
  while (true) {
    const int64_t n0 = tile * kColumns;
    uint32_t acc[kMFrags][kNTiles][4] = {};
    for (int64_t it = 0; it < my_chunks; it += kDepth) {
#pragma unroll
      for (int i = 0; i < kDepth; ++i) {
        if (it + i < my_chunks) {
          const Chunk<kMFrags, kNTiles>& ch = buf[i];
#pragma unroll
          for (int f = 0; f < kMFrags; ++f) {
            const uint4 lo = ch.a[f][0], hi = ch.a[f][1];
#pragma unroll
            for (int j = 0; j < kNTiles; ++j) {
              mma_16x8x32<kFp8>(acc[f][j], lo.x, hi.x, lo.y, hi.y, ch.b[j].x, ch.b[j].y);
              mma_16x8x32<kFp8>(acc[f][j], lo.z, hi.z, lo.w, hi.w, ch.b[j].z, ch.b[j].w);
            }
          }
          if (it + i + kDepth < my_chunks) load(it + i + kDepth, buf[i]);
        }
      }
    }

    const int64_t next = tile + gridDim.x;
    const bool has_next = next < tiles;
    if (has_next) {
      set_columns(next);
#pragma unroll
      for (int i = 0; i < kDepth; ++i) {
        if (i < my_chunks) load(i, buf[i]);
      }
    }

    // Partial sums to shared memory (C layout: c0,c1 at MMA row g, columns
    // 2t, 2t+1; c2,c3 at row g+8) — plain: per token fragment; transposed:
    // all at once, MMA rows being columns — a fixed-order sum over the warps,
    // then the epilogue.
    constexpr int kPasses = kTransposed ? 1 : kMFrags;
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      const int token0 = kTransposed ? 0 : 16 * pass;
      if (token0 >= args.m) break;
#pragma unroll
      for (int f = 0; f < kMFrags; ++f) {
        if (!kTransposed && f != pass) continue;
#pragma unroll
        for (int j = 0; j < kNTiles; ++j) {
          skinny::put_partials<kFp8, kTransposed>(partial[warp], acc[f][j], kTransposed ? 16 * f : 0, 8 * j, lane);
        }
      }
      __syncthreads();
      skinny::store_partial_sums<kFp8, kWarps, kRows, kColumns>(args, partial, token0, n0, threadIdx.x, kThreads);
      __syncthreads();
    }
    if (!has_next) break;
    tile = next;
  }
}

template <int kMFrags, int kNTiles, int kDepth, int kWarps, int kMinBlocks, bool kFp8, bool kTransposed = false>
constexpr auto kKernel = skinny_gemm_kernel<kMFrags, kNTiles, kDepth, kWarps, kMinBlocks, kFp8, kTransposed>;

// The persistent grid of a decode shape: the CTAs resident at once, at most
// max_per_sm per SM (launch_decode says how many).
template <auto kKernelFn>
int64_t persistent_slots(int device, int threads, int max_per_sm) {
  return std::min(kernel_info<kKernelFn>(device, threads).resident_ctas,
                  static_cast<int64_t>(max_per_sm) * cuda_device_info(device).sm_count);
}

// Grid: one CTA per column tile (`ctas` 0), or at most `ctas` CTAs, each
// looping over column tiles (persistent).
template <int kMFrags, int kNTiles, int kDepth, int kWarps, int kMinBlocks, bool kFp8, bool kTransposed>
void launch_kernel(const ScaledMmArgs& args, int64_t ctas) {
  constexpr auto kernel = kKernel<kMFrags, kNTiles, kDepth, kWarps, kMinBlocks, kFp8, kTransposed>;
  constexpr int kColumns = kTileColumns<kMFrags, kNTiles, kTransposed>;
  const int64_t tiles = (args.n + kColumns - 1) / kColumns;
  const int64_t blocks = ctas > 0 ? std::min(tiles, ctas) : tiles;
  launch_pdl_kernel(kernel, dim3(static_cast<unsigned>(blocks)), dim3(kWarps * 32), 0, as_cuda_stream(args.stream),
                    args.device.index, args);
}

// M = 17–64: one CTA per column tile of the plain kernel.
template <int kMFrags, int kNTiles, int kDepth, int kWarps>
void launch_per_tile(const ScaledMmArgs& args) {
  if (args.input_dtype == DType::kInt8) {
    launch_kernel<kMFrags, kNTiles, kDepth, kWarps, 1, false, false>(args, 0);
  } else {
    launch_kernel<kMFrags, kNTiles, kDepth, kWarps, 1, true, false>(args, 0);
  }
}

// How evenly `tiles` column tiles spread over `slots` persistent CTAs:
// tiles per CTA on average over the most any CTA gets (1 when they fit).
double balance(int64_t tiles, int64_t slots) {
  if (tiles <= slots) return 1.0;
  const int64_t most = (tiles + slots - 1) / slots;
  return static_cast<double>(tiles) / static_cast<double>(slots * most);
}

// M ≤ 16, persistent over 16-column tiles, 8 warps. Two shapes, measured on
// H100 (docs/gemm.md): "wide" (2 chunks in flight per warp) streams best (85 %
// of copy bandwidth at 1×28672×4096 vs 74 % for "deep"), "deep" (4 in
// flight, 2 CTAs per SM) when the tile count splits much more evenly over
// its fewer CTAs (e.g. N = 8192 with 3 wide CTAs per SM: 512 tiles on 264 vs
// 396 CTAs: 2 tiles on most CTAs vs 2 on 116 and 1 on the rest, whose SMs
// then idle). "deep" streams ~0.8× as fast per balanced tile.
// "wide" runs 3 CTAs per SM, or 4 where they split the tiles more evenly
// (N = 8192: 512 tiles in one round of 528; N = 57344: 3584 tiles on 528 /
// 396 CTAs, 1×57344×8192 int8 164 against 174 µs; not at N = 10240: 640
// tiles, 1.2 rounds of 528 against 1.6 of 396) and a build for 4 exists:
// skinny_decode_wide_ctas_per_sm, kernels.h. The transposed kernels fit 4
// in 64 registers either way; the plain int8 one has a second build for
// them (64 registers, 12 bytes of spills, which cost 2–4 % where 3 run).
// kTransposed (M ≤ 8): one 16-column MMA fragment and one 8-token tile
// instead of one 16-token fragment and two 8-column tiles (file comment).
template <bool kTransposed, bool kFp8>
void launch_decode(const ScaledMmArgs& args) {
  constexpr double kDeepRate = 0.8;
  constexpr int kMFrags = 1, kNTiles = kTransposed ? 1 : kSkinnyDecodeColumns / 8;
  constexpr int kWideMost = skinny_decode_wide_ctas_per_sm(kTransposed, kFp8);
  // The wide build for 3 per SM: the transposed kernels' only build.
  constexpr int kWideThree = kTransposed ? kWideMost : kSkinnyDecodeWideCtasPerSm;
  static_assert(kTileColumns<kMFrags, kNTiles, kTransposed> == kSkinnyDecodeColumns, "the table's tile width");
  const int64_t tiles = (args.n + kSkinnyDecodeColumns - 1) / kSkinnyDecodeColumns;
  const int device = args.device.index;
  const int64_t wide_most = persistent_slots<kKernel<kMFrags, kNTiles, 2, 8, kWideMost, kFp8, kTransposed>>(
      device, 256, kWideMost);
  const int64_t wide_three = std::min<int64_t>(
      persistent_slots<kKernel<kMFrags, kNTiles, 2, 8, kWideThree, kFp8, kTransposed>>(device, 256, kWideThree),
      int64_t{kSkinnyDecodeWideCtasPerSm} * cuda_device_info(device).sm_count);
  const int64_t deep_slots = persistent_slots<kKernel<kMFrags, kNTiles, 4, 8, 2, kFp8, kTransposed>>(device, 256, 2);
  const bool most = balance(tiles, wide_most) > balance(tiles, wide_three);
  if (kDeepRate * balance(tiles, deep_slots) > balance(tiles, most ? wide_most : wide_three)) {
    launch_kernel<kMFrags, kNTiles, 4, 8, 2, kFp8, kTransposed>(args, deep_slots);
  } else if (most) {
    launch_kernel<kMFrags, kNTiles, 2, 8, kWideMost, kFp8, kTransposed>(args, wide_most);
  } else {
    launch_kernel<kMFrags, kNTiles, 2, 8, kWideThree, kFp8, kTransposed>(args, wide_three);
  }
}

template <bool kTransposed>
void launch_decode(const ScaledMmArgs& args) {
  if (args.input_dtype == DType::kInt8) {
    launch_decode<kTransposed, false>(args);
  } else {
    launch_decode<kTransposed, true>(args);
  }
}

}  // namespace

bool skinny_gemm(const ScaledMmArgs& args, int /*sm_count*/) {
  if (args.m > 64 || !operands_aligned(args)) return false;  // 16-byte loads of A and B
  // fp8 needs the GPU's code built for sm_89+: an Ada GPU runs sm_80 code
  // when the build left 89 out, and its fp8 MMA there is a trap.
  if (args.input_dtype != DType::kInt8 &&
      kernel_info<kKernel<1, kSkinnyDecodeColumns / 8, 2, 8, kSkinnyDecodeWideCtasPerSm, true>>(args.device.index, 256)
              .arch < 89) {
    return false;
  }
  if (args.m <= kSkinnyDecodeTransposedMaxM) {
    launch_decode<true>(args);
  } else if (args.m <= 16) {
    launch_decode<false>(args);
  } else if (args.m <= 32) {
    launch_per_tile<2, 4, 2, 8>(args);
  } else {
    launch_per_tile<4, 4, 1, 8>(args);
  }
  return true;
}

}  // namespace qgemm::detail
