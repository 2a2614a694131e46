// Small-M weight-only kernel (M ≤ 16 tokens): streams the weight once with
// 16-byte loads, dequantizes in registers and multiplies on the tensor cores
// with the roles swapped — weight rows are the MMA's M=16 side, tokens its
// N=8 side (one n8 block for M ≤ 8, two for M ≤ 16) — so every loaded weight
// serves all tokens and the CUDA cores only dequantize.
//
// Block: 16 (M ≤ 8) or 32 (M ≤ 16) weight rows, i.e. one or two m16 tiles,
// × kWarps warps splitting K. A warp
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
// (fixed order), then bias and rounding.
#include "core/cuda_check.h"
#include "wonly/cuda/wonly_cuda.h"
#include "wonly/cuda/wonly_device.cuh"

namespace qgemm::detail {
namespace {

using namespace wonly;

constexpr int kWarps = 8;  // warps splitting K in a block
// m16 weight tiles per warp = token blocks: 16 rows per block for M ≤ 8 (more,
// smaller blocks: N = 28672 gives ~7 waves on 132 SMs, a small tail), 32 rows
// for M ≤ 16 (both n8 token blocks' activation fragments serve two tiles).
template <int kTokenBlocks>
constexpr int kRowTiles = kTokenBlocks;
template <int kTokenBlocks>
constexpr int kBlockRows = 16 * kRowTiles<kTokenBlocks>;

template <bool kInt4, int kTokenBlocks>
struct TileFragments {
  static constexpr int kTiles = kRowTiles<kTokenBlocks>;
  static constexpr int kActWords = kInt4 ? 16 : 8;  // E/2 words of 2 activations
  uint4 weight[kTiles][2];                           // [tile][row g, row g+8]
  float scale[kTiles][2], offset[kTiles][2];
  uint32_t act[kTokenBlocks][kActWords];
};

__device__ __forceinline__ uint4 load_stream(const uint8_t* p) {
  return __ldcs(reinterpret_cast<const uint4*>(p));  // read once: evict first
}

template <bool kInt4, int kTokenBlocks>
__device__ __forceinline__ void load_tile(const WeightOnlyArgs& args, int64_t tile,
                                          int64_t row_base, int lane,
                                          TileFragments<kInt4, kTokenBlocks>& f) {
  constexpr int kElems = kInt4 ? 32 : 16;
  const int g = lane >> 2, t = lane & 3;
  const int64_t chunk = tile * 4 + t;
  const bool valid = chunk < args.chunks_per_row();
  const int group = static_cast<int>(chunk) / static_cast<int>(args.group_size / kElems);
#pragma unroll
  for (int r = 0; r < kRowTiles<kTokenBlocks>; ++r) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t row = min(row_base + r * 16 + h * 8 + g, args.n - 1);
      if (valid) {
        f.weight[r][h] = load_stream(args.w + args.w_addr.chunk_offset(row, chunk));
        f.scale[r][h] = __ldg(args.scales + row * args.ld_scales + group);
        f.offset[r][h] = args.offsets ? __ldg(args.offsets + row * args.ld_offsets + group) : 0.0f;
      } else {
        f.weight[r][h] = make_uint4(0, 0, 0, 0);
        f.scale[r][h] = 0.0f;
        f.offset[r][h] = 0.0f;
      }
    }
  }
#pragma unroll
  for (int b = 0; b < kTokenBlocks; ++b) {
    const int64_t token = b * 8 + g;
    const auto* src = reinterpret_cast<const uint4*>(static_cast<const uint16_t*>(args.a) +
                                                     token * args.lda + chunk * kElems);
#pragma unroll
    for (int v = 0; v < kElems / 8; ++v) {
      const uint4 x = (valid && token < args.m) ? __ldg(src + v) : make_uint4(0, 0, 0, 0);
      f.act[b][4 * v] = x.x;
      f.act[b][4 * v + 1] = x.y;
      f.act[b][4 * v + 2] = x.z;
      f.act[b][4 * v + 3] = x.w;
    }
  }
}

// acc[r][b] += ŵ(tile r) · a(token block b) over the lane's chunk.
template <bool kBf16, bool kInt4, int kTokenBlocks>
__device__ __forceinline__ void mma_tile(const TileFragments<kInt4, kTokenBlocks>& f,
                                         float acc[kRowTiles<kTokenBlocks>][kTokenBlocks][4]) {
  constexpr int kWords = 4;  // 16-byte chunk
#pragma unroll
  for (int word = 0; word < kWords; ++word) {
#pragma unroll
    for (int r = 0; r < kRowTiles<kTokenBlocks>; ++r) {
      const uint32_t lo_word = reinterpret_cast<const uint32_t*>(&f.weight[r][0])[word];
      const uint32_t hi_word = reinterpret_cast<const uint32_t*>(&f.weight[r][1])[word];
      if constexpr (kInt4) {
        // 8 elements per word = MMA steps 2·word (pairs 0, 1) and 2·word+1 (pairs 2, 3).
        uint32_t lo[4], hi[4];
        dequant_int4_word<kBf16>(lo_word, f.scale[r][0], f.offset[r][0], lo);
        dequant_int4_word<kBf16>(hi_word, f.scale[r][1], f.offset[r][1], hi);
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int step = 2 * word + half;
          const uint32_t a[4] = {lo[2 * half], hi[2 * half], lo[2 * half + 1], hi[2 * half + 1]};
#pragma unroll
          for (int b = 0; b < kTokenBlocks; ++b) {
            const uint32_t bf[2] = {f.act[b][2 * step], f.act[b][2 * step + 1]};
            mma_16816<kBf16>(acc[r][b], a, bf);
          }
        }
      } else {
        // 4 elements per word = MMA step `word`.
        uint32_t lo[2], hi[2];
        dequant_int8_word<kBf16>(lo_word, f.scale[r][0], f.offset[r][0], lo);
        dequant_int8_word<kBf16>(hi_word, f.scale[r][1], f.offset[r][1], hi);
        const uint32_t a[4] = {lo[0], hi[0], lo[1], hi[1]};
#pragma unroll
        for (int b = 0; b < kTokenBlocks; ++b) {
          const uint32_t bf[2] = {f.act[b][2 * word], f.act[b][2 * word + 1]};
          mma_16816<kBf16>(acc[r][b], a, bf);
        }
      }
    }
  }
}

template <bool kBf16, bool kInt4, int kTokenBlocks>
__global__ void __launch_bounds__(kWarps * 32) wonly_gemv_kernel(const WeightOnlyArgs args) {
  constexpr int kAcc = kRowTiles<kTokenBlocks> * kTokenBlocks * 4;
  __shared__ float partial[kWarps][kAcc][32];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t row_base = static_cast<int64_t>(blockIdx.x) * kBlockRows<kTokenBlocks>;
  const int64_t tiles = (args.chunks_per_row() + 3) / 4;

  float acc[kRowTiles<kTokenBlocks>][kTokenBlocks][4] = {};
  if (warp < tiles) {
    TileFragments<kInt4, kTokenBlocks> current, next;
    load_tile(args, warp, row_base, lane, current);
    for (int64_t tile = warp; tile < tiles; tile += kWarps) {
      // Issue the next tile's loads before this tile's math (register double buffer).
      if (tile + kWarps < tiles) load_tile(args, tile + kWarps, row_base, lane, next);
      mma_tile<kBf16>(current, acc);
      current = next;
    }
  }

#pragma unroll
  for (int r = 0; r < kRowTiles<kTokenBlocks>; ++r)
#pragma unroll
    for (int b = 0; b < kTokenBlocks; ++b)
#pragma unroll
      for (int e = 0; e < 4; ++e) partial[warp][(r * kTokenBlocks + b) * 4 + e][lane] = acc[r][b][e];
  __syncthreads();

  // One output per (accumulator register, lane) pair: sum the warps in order.
  for (int i = threadIdx.x; i < kAcc * 32; i += kWarps * 32) {
    const int reg = i / 32, src_lane = i % 32;
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum = __fadd_rn(sum, partial[w][reg][src_lane]);
    const int r = reg / (kTokenBlocks * 4), b = (reg / 4) % kTokenBlocks, e = reg % 4;
    const int g = src_lane >> 2, t = src_lane & 3;
    const int64_t row = row_base + r * 16 + g + (e >= 2 ? 8 : 0);
    const int64_t token = b * 8 + 2 * t + (e & 1);
    if (row < args.n && token < args.m) store_output<kBf16>(args, token, row, sum);
  }
}

template <bool kBf16, bool kInt4>
void launch(const WeightOnlyArgs& args, int token_blocks) {
  const dim3 block(kWarps * 32);
  cudaStream_t stream = as_cuda_stream(args.stream);
  if (token_blocks == 1) {
    const dim3 grid(static_cast<unsigned>((args.n + kBlockRows<1> - 1) / kBlockRows<1>));
    wonly_gemv_kernel<kBf16, kInt4, 1><<<grid, block, 0, stream>>>(args);
  } else {
    const dim3 grid(static_cast<unsigned>((args.n + kBlockRows<2> - 1) / kBlockRows<2>));
    wonly_gemv_kernel<kBf16, kInt4, 2><<<grid, block, 0, stream>>>(args);
  }
  QGEMM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_wonly_gemv(const WeightOnlyArgs& args, int token_blocks) {
  const bool bf16 = args.dtype == DType::kBFloat16;
  if (bf16 && args.int4) launch<true, true>(args, token_blocks);
  else if (bf16) launch<true, false>(args, token_blocks);
  else if (args.int4) launch<false, true>(args, token_blocks);
  else launch<false, false>(args, token_blocks);
}

}  // namespace qgemm::detail
