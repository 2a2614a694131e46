// Weight-only decode kernel for Hopper, int8 weights at M ≤ 16 (sm_90):
// wonly_gemv's lane mapping, dequantization and MMAs (mma_chunk_word,
// wonly_device.cuh), with the weight streamed into shared memory by bulk
// asynchronous copies instead of register loads, as the scaled GEMM's
// decode kernel does (gemm/cuda/skinny_stream_sm90.cu).
//
// Why: wonly_gemv's int8 warps each wait on DRAM between their load and
// their MMAs. Here one producer warp keeps kStages stages of a tile's weight
// rows requested and refills each as soon as the consumers have read it,
// across tile boundaries, so the 16 consumer warps wait only for shared
// memory and for their activations and parameters (L1 / L2). H100, W8 per
// channel, same call, µs (bench/results/wonly-h100-stream-rule-sweep.json):
// (4096, 4096) 12.4 at M = 1 and 13.1 at M = 16 against wonly_gemv's 13.4
// and 14.4 — where its tiles are one round on most SMs (the dispatch rule,
// wonly_stream_plan.h); over several rounds it takes 0.96–1.09× wonly_gemv's
// time, and up to 1.25× where the last round is thin. Not for int4, whose
// longer dequantization needs more resident warps than one CTA of consumers
// gives: 5–22 % slower there (docs/weight_only.md).
//
// CTA: 16 consumer warps + 1 producer warp, one per SM, persistent over the
// ⌈N / 32⌉ row tiles (tile blockIdx.x, + gridDim.x, …). A stage holds 16 K
// tiles of 64 bytes (4 chunks of 16 bytes, 64 int8 elements) of each of the
// tile's 32 rows; consumer warp w multiplies K tile w of every stage.
// Shared-memory layout of a stage, per block of 16 rows:
//
//   plain:      [16 rows][1024 B + 64 B pad]  row r's stage slice in one
//               bulk copy; the pad puts rows g and g + 8 of a quarter
//               warp's 16-byte reads in distinct banks
//   prepacked:  [16 K tiles][16 rows][64 B]   the stored layout: one bulk
//               copy of 1 KB per K tile of a 16-row block
//
// Lane (g = lane/4, t = lane%4) of warp w reads chunk t of K tile w of rows
// g and g + 8 of each m16 tile — what wonly_gemv's lane reads from global
// memory — and the same chunk of token g of each n8 block. K is walked
// forward on a CTA's even tiles and backward on its odd ones (the next tile
// starts on the activations its predecessor read last, still in L1). After
// a tile's last stage the consumers add their partial sums in shared memory
// in warp order while the producer already fills the next tile's stages;
// then bias and rounding (wonly_device.cuh).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/cuda_check.h"
#include "core/cuda_device_info.h"
#include "core/cuda_kernel_info.h"
#include "core/cuda_launch.cuh"
#include "core/cuda_mbarrier.cuh"
#include "wonly/cuda/wonly_cuda.h"
#include "wonly/cuda/wonly_device.cuh"
#include "wonly/cuda/wonly_stream_plan.h"

namespace qgemm::detail {
namespace {

using namespace wonly;

constexpr int kConsumerWarps = 16;
constexpr int kThreads = (kConsumerWarps + 1) * 32;
constexpr int kTiles = kStreamRows / 16;  // m16 weight tiles per row tile
constexpr int kTokenBlocks = 2;           // n8 token blocks: M ≤ 16
constexpr int kElems = 16;                // int8 elements per 16-byte chunk
constexpr int kKTiles = kConsumerWarps;   // 64-byte K tiles per stage: one per consumer warp
constexpr int kPlainPitch = kKTiles * 64 + 64;  // plain layout: bytes per row of a stage
constexpr int kBlockBytes = 16 * kPlainPitch;   // per 16-row block (≥ the prepacked kKTiles × 1024)
static_assert(kPlainPitch % 128 == 64, "rows g and g + 8 of a quarter warp in distinct banks");
static_assert(kKTiles * 1024 <= kBlockBytes, "a prepacked block's stage fits its slot");
static_assert(kTiles * kKTiles == 32, "one producer lane per prepacked (block, K tile) copy");
// 3 stages (102 KB). Not tuned beyond: in the 8-warp int4 / int8
// experiment 128 KB of stages was slower than 64 KB (less L1 left for the
// activations), and 16–24 consumer warps ran with ~100 KB.
constexpr int kStages = 3;
constexpr int kAcc = kTiles * kTokenBlocks * 4;  // accumulator registers per lane
constexpr int kConsumerBarrier = 1;              // named barrier over the consumer warps

struct SharedStorage {
  uint8_t stages[kStages][kTiles * kBlockBytes];
  uint64_t full[kStages];   // the stage's bytes have landed
  uint64_t empty[kStages];  // every consumer thread has read the stage
  float partial[kConsumerWarps][kAcc][32];
};

__device__ __forceinline__ void consumer_sync() {
  asm volatile("bar.sync %0, %1;\n" ::"n"(kConsumerBarrier), "n"(kConsumerWarps * 32) : "memory");
}

// A lane's pointers to the scales and offsets of its rows g and g + 8 of
// each m16 tile of one row tile (rows past N: row N − 1), set once per tile.
template <bool kParams16>
struct TileParams {
  using Param = std::conditional_t<kParams16, uint16_t, float>;
  const Param* s[kTiles][2];
  const Param* o[kTiles][2];
};

template <bool kParams16>
__device__ __forceinline__ TileParams<kParams16> tile_params(const WeightOnlyArgs& args, int64_t tile, int g) {
  using Param = typename TileParams<kParams16>::Param;
  TileParams<kParams16> p;
#pragma unroll
  for (int r = 0; r < kTiles; ++r)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t row = min(tile * kStreamRows + r * 16 + h * 8 + g, args.n - 1);
      p.s[r][h] = static_cast<const Param*>(args.scales) + row * args.ld_scales;
      p.o[r][h] = args.offsets ? static_cast<const Param*>(args.offsets) + row * args.ld_offsets : p.s[r][h];
    }
  return p;
}

template <bool kBf16, bool kParams16>
__global__ void __launch_bounds__(kThreads, 1) wonly_stream_kernel(const WeightOnlyArgs args) {
  wait_for_preceding_grids();
  allow_dependent_launch();
  extern __shared__ __align__(128) uint8_t smem_raw[];
  auto& smem = *reinterpret_cast<SharedStorage*>(smem_raw);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  init_stage_ring(smem.full, smem.empty, kStages, kConsumerWarps * 32);
  __syncthreads();

  const int64_t tiles = stream_row_tiles(args.n);
  const int chunks = static_cast<int>(args.chunks_per_row());
  const int k_stages = (chunks + 4 * kKTiles - 1) / (4 * kKTiles);
  const bool prepacked = args.prepacked;

  if (warp == kConsumerWarps) {
    // Producer. Plain: lane r copies the stage slice of row r (rows past N
    // copy row N − 1: their outputs are never stored). Prepacked: lane
    // (b, kt) copies K tile kt of 16-row block b, 1 KB (blocks past the
    // weight copy its last; its rows past N are the stored zero padding).
    // 32 copies of 1 KB per stage either way: on one round of tiles ((4096,
    // 4096), (3584, 4096), (4096, 11008), (4096, 14336); H100,
    // bench/results/wonly-h100-stream-prepacked-copies.json) one 16 KB copy
    // per block took 7–13 % longer at M = 8–16 and up to 8 % at M = 1
    // (1 % less at M = 1 with K ≥ 11008).
    const uint64_t policy = l2_evict_first_policy();
    const int64_t row_blocks = (args.n + 15) / 16;
    uint32_t it = 0;  // stages issued: slot it % kStages, pass it / kStages
    bool backward = false;
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x, backward = !backward) {
      for (int step = 0; step < k_stages; ++step, ++it) {
        const int s = backward ? k_stages - 1 - step : step;
        const uint32_t slot = it % kStages;
        mbarrier_wait(smem_address(&smem.empty[slot]), ((it / kStages) & 1u) ^ 1u);
        const int first_chunk = s * 4 * kKTiles;
        const uint32_t full = smem_address(&smem.full[slot]);
        uint8_t* stage = smem.stages[slot];
        if (prepacked) {
          const int k_tiles = min(kKTiles, (chunks + 3) / 4 - s * kKTiles);  // in this stage
          if (lane == 0) mbarrier_expect_bytes(full, static_cast<uint32_t>(kTiles * k_tiles * 1024));
          __syncwarp();
          const int b = lane / kKTiles, kt = lane % kKTiles;
          if (kt < k_tiles) {
            const int64_t block = min(tile * kTiles + b, row_blocks - 1);
            bulk_copy_to_shared(smem_address(stage + b * kBlockBytes + kt * 1024),
                                args.w + args.w_addr.chunk_offset(block * 16, first_chunk + 4 * kt), 1024, full,
                                policy);
          }
        } else {
          const auto bytes = static_cast<uint32_t>(min(4 * kKTiles, chunks - first_chunk) * 16);
          if (lane == 0) mbarrier_expect_bytes(full, kStreamRows * bytes);
          __syncwarp();
#pragma unroll
          for (int r = lane; r < kStreamRows; r += 32) {
            const int64_t row = min(tile * kStreamRows + r, args.n - 1);
            bulk_copy_to_shared(smem_address(stage + (r / 16) * kBlockBytes + (r % 16) * kPlainPitch),
                                args.w + args.w_addr.chunk_offset(row, first_chunk), bytes, full, policy);
          }
        }
      }
    }
    return;
  }

  // Consumers: lane (g, t) of warp w reads chunk t of K tile w of rows g and
  // g + 8 of each m16 tile at these offsets of a stage, and the same chunk of
  // token g of each n8 block (tokens ≥ M read token 0: columns never stored).
  const int g = lane >> 2, t = lane & 3;
  uint32_t offset[kTiles][2];
#pragma unroll
  for (int r = 0; r < kTiles; ++r)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      offset[r][h] = r * kBlockBytes + 16 * t +
                     (prepacked ? (g + 8 * h) * 64 + warp * 1024 : (g + 8 * h) * kPlainPitch + warp * 64);
    }
  const uint16_t* token[kTokenBlocks];
#pragma unroll
  for (int b = 0; b < kTokenBlocks; ++b) {
    token[b] = static_cast<const uint16_t*>(args.a) + (b * 8 + g < args.m ? b * 8 + g : 0) * args.lda;
  }
  const int shift = chunk_group_shift<false>(args);
  const bool has_offsets = args.offsets != nullptr;
  const int64_t group_stride = args.params_group_stride;  // wonly_args.h

  uint32_t it = 0;
  bool backward = false;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x, backward = !backward) {
    const TileParams<kParams16> params = tile_params<kParams16>(args, tile, g);
    float acc[kTiles][kTokenBlocks][4] = {};
    for (int step = 0; step < k_stages; ++step, ++it) {
      const int s = backward ? k_stages - 1 - step : step;  // as the producer's
      // This stage's activations and parameters, requested before the
      // stage is waited for; chunks past K (a partial last stage or K tile)
      // are zeros on every side.
      const int chunk = (s * kKTiles + warp) * 4 + t;
      const bool valid = chunk < chunks;
      const int64_t at_group = static_cast<int64_t>(chunk >> shift) * group_stride;
      uint32_t act[kTokenBlocks][kElems / 2];
#pragma unroll
      for (int b = 0; b < kTokenBlocks; ++b) {
        const auto* src = reinterpret_cast<const uint4*>(token[b] + static_cast<int64_t>(chunk) * kElems);
#pragma unroll
        for (int v = 0; v < kElems / 8; ++v) {
          const uint4 x = valid ? __ldg(src + v) : make_uint4(0, 0, 0, 0);
          act[b][4 * v] = x.x, act[b][4 * v + 1] = x.y, act[b][4 * v + 2] = x.z, act[b][4 * v + 3] = x.w;
        }
      }
      float scale[kTiles][2], offs[kTiles][2];
#pragma unroll
      for (int r = 0; r < kTiles; ++r)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          scale[r][h] = valid ? load_param<kBf16>(params.s[r][h] + at_group) : 0.0f;
          offs[r][h] = valid && has_offsets ? load_param<kBf16>(params.o[r][h] + at_group) : 0.0f;
        }

      const uint32_t slot = it % kStages;
      mbarrier_wait(smem_address(&smem.full[slot]), (it / kStages) & 1u);
      const uint8_t* stage = smem.stages[slot];
      uint4 weight[kTiles][2];
#pragma unroll
      for (int r = 0; r < kTiles; ++r)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          weight[r][h] = valid ? *reinterpret_cast<const uint4*>(stage + offset[r][h]) : make_uint4(0, 0, 0, 0);
        }
      // Every reader arrives itself (release: its reads of the stage come
      // before the producer's next copy into it).
      mbarrier_arrive(smem_address(&smem.empty[slot]));

#pragma unroll
      for (int word = 0; word < 4; ++word) {
#pragma unroll
        for (int r = 0; r < kTiles; ++r) {
          const uint32_t lo = reinterpret_cast<const uint32_t*>(&weight[r][0])[word];
          const uint32_t hi = reinterpret_cast<const uint32_t*>(&weight[r][1])[word];
          mma_chunk_word<kBf16, false>(lo, hi, param2<kBf16>(scale[r][0]), param2<kBf16>(offs[r][0]),
                                       param2<kBf16>(scale[r][1]), param2<kBf16>(offs[r][1]), word, act, acc[r]);
        }
      }
    }

    // The tile's partial sums, added over the warps in order, then bias and
    // rounding: one output per (accumulator register, lane) pair, as in
    // wonly_gemv.
#pragma unroll
    for (int r = 0; r < kTiles; ++r)
#pragma unroll
      for (int b = 0; b < kTokenBlocks; ++b)
#pragma unroll
        for (int e = 0; e < 4; ++e) smem.partial[warp][(r * kTokenBlocks + b) * 4 + e][lane] = acc[r][b][e];
    consumer_sync();
    for (int i = threadIdx.x; i < kAcc * 32; i += kConsumerWarps * 32) {
      const int reg = i / 32, src_lane = i % 32;
      const int r = reg / (kTokenBlocks * 4), b = (reg / 4) % kTokenBlocks, e = reg % 4;
      const int64_t row = tile * kStreamRows + r * 16 + (src_lane >> 2) + (e >= 2 ? 8 : 0);
      const int64_t tok = b * 8 + 2 * (src_lane & 3) + (e & 1);
      if (row < args.n && tok < args.m) {
        float sum = 0.0f;
#pragma unroll
        for (int w = 0; w < kConsumerWarps; ++w) sum = __fadd_rn(sum, smem.partial[w][reg][src_lane]);
        store_output<kBf16>(args, tok, row, sum);
      }
    }
    consumer_sync();  // the sums are read before the next tile's partials overwrite them
  }
}

template <bool kBf16, bool kParams16>
void launch(const WeightOnlyArgs& args) {
  constexpr auto kernel = wonly_stream_kernel<kBf16, kParams16>;
  constexpr int kSmem = static_cast<int>(sizeof(SharedStorage));
  const KernelInfo info = kernel_info<kernel>(args.device.index, kThreads, kSmem);  // also opts in > 48 KB
  const int64_t tiles = stream_row_tiles(args.n);
  launch_pdl_kernel(kernel, dim3(static_cast<unsigned>(std::min(tiles, info.resident_ctas))), dim3(kThreads), kSmem,
                    as_cuda_stream(args.stream), args.device.index, args);
}

}  // namespace

void launch_wonly_stream(const WeightOnlyArgs& args) {
  const bool bf16 = args.dtype == DType::kBFloat16;
  if (bf16) args.params16 ? launch<true, true>(args) : launch<true, false>(args);
  else args.params16 ? launch<false, true>(args) : launch<false, false>(args);
  QGEMM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace qgemm::detail
