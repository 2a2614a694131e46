// Decode scaled GEMM for Hopper (M ≤ 16, sm_90): the skinny kernel's tiles
// and MMAs (skinny_gemm.cu), with the weight streamed into shared memory by
// bulk asynchronous copies instead of register loads, so the bytes in flight
// are set by the shared memory, not by the registers.
//
// Why: the register-ring kernel keeps 2–4 chunks (16 bytes × 2 columns) per
// lane in flight, and its chain load → MMA → reload is bound by the DRAM
// latency. Here one producer warp keeps kStages stages of 16 weight rows ×
// kStageK bytes (64 KB per SM) requested and refills each as soon as the
// consumers have read it — across tile boundaries, so a tile's reduction
// and epilogue do not drain the pipe. H100, same call against the ring
// kernel: 0.91× its time at M ≤ 8 and 0.90× at M = 9–16 (geomean over the
// grid's eight weights, int8 and fp8; docs/gemm.md, "M ≤ 16 on Hopper").
//
// What was measured to matter (same-call A/B, docs/gemm.md):
//   - 4 stages, not 8: the tokens are read through L1 by every tile, and
//     136 KB of stages left too little L1 for 16 tokens × K (M = 16:
//     16×57344×8192 184 → 165 µs);
//   - tokens through L1, not staged by the producer: staging them re-reads
//     16 × K bytes from L2 per tile, as many as the weight's (M = 16 up to
//     1.5× slower);
//   - each tile's scale, bias and zero-point term loaded when the tile
//     starts, not in its epilogue (16×6144×4096 16.2 → 14.5 µs);
//   - one or two CTAs per SM by the time their tiles take: the busiest
//     SM's tiles over the rate one or two CTAs stream at, which the DRAM
//     caps (so two wherever one cannot keep up with it, as on the H200),
//     on a tie two where the tokens overflow L1 (skinny_stream_ctas_per_sm,
//     skinny_stream_launch.h);
//     fp8 at M ≤ 8 at two per SM takes the plain form, which gains from
//     the second CTA where the transposed one does not (skinny_stream_sm90),
//     with tokens 8–15 (padding) left as zeros instead of converted
//     (kPaddedTokens: a quarter of the tile's e4m3 conversions; 0.97× the
//     time at M ≤ 8, geomean over eight weights);
//   - K walked forward on a CTA's even tiles and backward on its odd ones,
//     so that a tile starts on the tokens its predecessor ended with, still
//     in L1 (0.5–1 % faster geomean, up to 3 %).
//
// CTA: 8 consumer warps + 1 producer warp, one or two CTAs per SM
// (persistent over the N/16 column tiles: tile blockIdx.x, + gridDim.x, …;
// K order as above). Stage s of a tile
// holds bytes [s·kStageK, (s+1)·kStageK) of K of its 16 weight rows, row r
// at r·kRowPitch (pitch kStageK + 64: the 16-byte reads of rows g and g + 8
// by lanes (g, t) fall in distinct banks per quarter warp):
//
//   producer (lane r < 16):  wait empty[slot] → (lane 0) expect 16·bytes on
//                            full[slot] → cp.async.bulk row r's K slice
//   consumer warp w:         load the next stage's tokens (L1) → wait
//                            full[slot] → for its two 64-element chunks
//                            c = w, w + 8 of the stage: rows g, g + 8 from
//                            shared memory → MMAs → each thread arrives on
//                            empty[slot]
//
// The MMAs, their word order and the transposed form for M ≤ 8 are the
// register-ring kernel's (skinny_gemm.cu's file comment): a lane's 16 bytes
// of a weight row and of a token are the same k, whichever operand they
// feed. After a tile's last stage the consumer warps add their partial sums
// in shared memory in warp order (skinny_common.cuh) while the producer
// already fills the next tile's stages.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda_check.h"
#include "core/cuda_device_info.h"
#include "core/cuda_dram_bandwidth.h"
#include "core/cuda_kernel_info.h"
#include "core/cuda_launch.cuh"
#include "core/cuda_mbarrier.cuh"
#include "gemm/cuda/kernels.h"
#include "gemm/cuda/operand_layout.h"
#include "gemm/cuda/skinny_common.cuh"
#include "gemm/cuda/skinny_stream_launch.h"

namespace qgemm::detail {
namespace {

constexpr int kColumns = kSkinnyDecodeColumns;  // 16 weight rows (output columns) per tile
constexpr int kStageK = 1024;                   // K bytes per weight row per stage
constexpr int kRowPitch = kStageK + 64;         // shared-memory bytes per row of a stage
constexpr int kStageBytes = kColumns * kRowPitch;
constexpr int kStages = 4;  // 68 KB: one CTA per SM, and L1 room for the tokens (file comment)
constexpr int kConsumerWarps = 8;
constexpr int kThreads = (kConsumerWarps + 1) * 32;
constexpr int kChunk = 64;  // K elements per MMA pair (16 bytes per lane)
constexpr int kChunksPerWarp = kStageK / kChunk / kConsumerWarps;
static_assert(kChunksPerWarp * kChunk * kConsumerWarps == kStageK, "a stage splits evenly over the consumer warps");
// Named barrier 1 (0 is __syncthreads) over the consumer warps only.
constexpr int kConsumerBarrier = 1;

template <bool kTransposed>
constexpr int kPartialRows = kTransposed ? 8 : 16;  // tokens per tile

template <bool kTransposed, bool kFp8>
struct SharedStorage {
  uint8_t stages[kStages][kStageBytes];
  uint64_t full[kStages];   // the stage's bytes have landed
  uint64_t empty[kStages];  // every consumer thread has read the stage
  skinny::Acc<kFp8> partial[kConsumerWarps][kPartialRows<kTransposed>][kColumns + 1];
};

__device__ __forceinline__ void consumer_sync() {
  asm volatile("bar.sync %0, %1;\n" ::"n"(kConsumerBarrier), "n"(kConsumerWarps * 32) : "memory");
}

// kPaddedTokens (plain fp8 at M ≤ 8 only): tokens 8–15 of the tile are
// padding, whose f16 MMA words are zeros without converting them.
template <bool kTransposed, bool kFp8, bool kPaddedTokens = false>
__global__ void __launch_bounds__(kThreads, 1) skinny_stream_kernel(const ScaledMmArgs args) {
  static_assert(!kPaddedTokens || (kFp8 && !kTransposed), "only the plain fp8 tile converts the padding tokens");
  wait_for_preceding_grids();
  allow_dependent_launch();
  extern __shared__ __align__(128) uint8_t smem_raw[];
  auto& smem = *reinterpret_cast<SharedStorage<kTransposed, kFp8>*>(smem_raw);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  init_stage_ring(smem.full, smem.empty, kStages, kConsumerWarps * 32);
  __syncthreads();

  const int64_t tiles = (args.n + kColumns - 1) / kColumns;
  const int k_stages = static_cast<int>((args.k + kStageK - 1) / kStageK);
  const auto* b = static_cast<const uint8_t*>(args.b);

  if (warp == kConsumerWarps) {
    // Producer: lane r < 16 copies weight row r of each stage (rows past N
    // copy row N − 1: their outputs are never stored).
    const uint64_t policy = l2_evict_first_policy();
    uint32_t it = 0;  // stages issued: slot it % kStages, pass it / kStages
    bool backward = false;
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x, backward = !backward) {
      const int64_t row = std::min<int64_t>(tile * kColumns + lane, args.n - 1);
      const uint8_t* src = b + row * args.ldb;
      for (int step = 0; step < k_stages; ++step, ++it) {
        const int s = backward ? k_stages - 1 - step : step;
        const uint32_t slot = it % kStages;
        mbarrier_wait(smem_address(&smem.empty[slot]), ((it / kStages) & 1u) ^ 1u);
        const auto bytes = static_cast<uint32_t>(std::min<int64_t>(kStageK, args.k - int64_t{s} * kStageK));
        const uint32_t full = smem_address(&smem.full[slot]);
        if (lane == 0) mbarrier_expect_bytes(full, kColumns * bytes);
        __syncwarp();
        if (lane < kColumns) {
          bulk_copy_to_shared(smem_address(&smem.stages[slot][lane * kRowPitch]), src + int64_t{s} * kStageK, bytes,
                              full, policy);
        }
      }
    }
    return;
  }

  // Consumers. Lane (g, t) multiplies 16 bytes at k = stage k0 + 64·chunk +
  // 16·t of weight rows g and g + 8 and of token g (transposed) or tokens g
  // and g + 8 (plain); tokens past M read token 0 with zeros.
  const int g = lane / 4, t = lane % 4;
  constexpr int kTokenRows = kTransposed ? 1 : 2;
  const auto* a = static_cast<const uint8_t*>(args.a);
  const uint8_t* token[kTokenRows];
  bool token_ok[kTokenRows];
#pragma unroll
  for (int h = 0; h < kTokenRows; ++h) {
    const int64_t row = g + 8 * h;
    token_ok[h] = row < args.m;
    token[h] = a + (token_ok[h] ? row : 0) * args.lda + 16 * t;
  }
  // This warp's tokens for stage s (k offsets w·64 + 8·64·c within it).
  auto load_tokens = [&](int s, uint4 (&dst)[kChunksPerWarp][kTokenRows]) {
#pragma unroll
    for (int c = 0; c < kChunksPerWarp; ++c) {
      const int64_t k0 = int64_t{s} * kStageK + (c * kConsumerWarps + warp) * kChunk;
      const bool k_ok = k0 + 16 * t < args.k;  // K % 16 == 0: a lane's 16 bytes are all in or all out
#pragma unroll
      for (int h = 0; h < kTokenRows; ++h) {
        dst[c][h] = k_ok && token_ok[h] ? __ldg(reinterpret_cast<const uint4*>(token[h] + k0)) : make_uint4(0, 0, 0, 0);
      }
    }
  };

  // Consumer thread i < kOutputs stores output (token i / 16, column i % 16)
  // of each tile; its column's scale, bias and zero-point term are loaded
  // when the tile starts, so their latency hides under the tile's stages.
  constexpr int kOutputs = kPartialRows<kTransposed> * kColumns;
  static_assert(kOutputs <= kConsumerWarps * 32, "one output per consumer thread");
  const int out_row = threadIdx.x / kColumns, out_col = threadIdx.x % kColumns;
  const bool stores = threadIdx.x < kOutputs && out_row < args.m;

  uint32_t it = 0;
  uint4 tokens[kChunksPerWarp][kTokenRows];
  load_tokens(0, tokens);
  bool backward = false;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x, backward = !backward) {
    const int64_t col = tile * kColumns + out_col;
    skinny::ColumnOperands column;
    if (stores && col < args.n) column = skinny::load_column_operands(args, col);
    constexpr int kNTiles = kTransposed ? 1 : 2;
    uint32_t acc[kNTiles][4] = {};
    for (int step = 0; step < k_stages; ++step, ++it) {
      const int s = backward ? k_stages - 1 - step : step;  // as the producer's
      // The next stage's tokens (after the last, the next tile's first: this
      // tile's last again, walked the other way) are loaded before this
      // stage is waited for and multiplied.
      uint4 next[kChunksPerWarp][kTokenRows];
      const int next_s = step + 1 < k_stages ? (backward ? s - 1 : s + 1)
                                             : (backward ? 0 : k_stages - 1);
      load_tokens(next_s, next);
      const uint32_t slot = it % kStages;
      mbarrier_wait(smem_address(&smem.full[slot]), (it / kStages) & 1u);
      const uint8_t* stage = smem.stages[slot];
#pragma unroll
      for (int c = 0; c < kChunksPerWarp; ++c) {
        const int kk = (c * kConsumerWarps + warp) * kChunk + 16 * t;
        // Bytes past K hold an earlier stage's data (or none yet): zeros
        // instead, on both sides (an fp8 NaN times zero is NaN).
        const bool k_ok = int64_t{s} * kStageK + kk < args.k;
        const uint4 zero = make_uint4(0, 0, 0, 0);
        const uint4 lo = k_ok ? *reinterpret_cast<const uint4*>(stage + g * kRowPitch + kk) : zero;
        const uint4 hi = k_ok ? *reinterpret_cast<const uint4*>(stage + (g + 8) * kRowPitch + kk) : zero;
        if constexpr (kTransposed) {
          // Dᵀ tile: weight rows g, g + 8 are the MMA's rows, token g its column.
          const uint4 x = tokens[c][0];
          skinny::mma_16x8x32<kFp8>(acc[0], lo.x, hi.x, lo.y, hi.y, x.x, x.y);
          skinny::mma_16x8x32<kFp8>(acc[0], lo.z, hi.z, lo.w, hi.w, x.z, x.w);
        } else if constexpr (kFp8) {
          // The same D tile from f16 MMAs: each of the four words' e4m3
          // bytes converted once (skinny::e4m3x16_to_f16x2), not once per
          // MMA that reads it as ptxas's lowering of the e4m3 MMA does.
          // H100, same call: M = 9–16 fp8 SASS 1296 → 1096 instructions,
          // 124 → 91 registers; 16×8192×28672 91.9 → 87.5 µs. At M ≤ 8
          // tokens 8–15 are zeros (kPaddedTokens): f16 +0 is all zero
          // bits, and their conversions were a quarter of the tile's (H200,
          // same call: 1×10240×8192 30.3 → 28.9 µs, 1×4096×14336 20.8 → 19.5).
          uint32_t x[8], y[8], wl[8], wh[8];
          skinny::e4m3x16_to_f16x2(tokens[c][0], x);
          if constexpr (kPaddedTokens) {
#pragma unroll
            for (int i = 0; i < 8; ++i) y[i] = 0u;
          } else {
            skinny::e4m3x16_to_f16x2(tokens[c][1], y);
          }
          skinny::e4m3x16_to_f16x2(lo, wl);
          skinny::e4m3x16_to_f16x2(hi, wh);
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            skinny::mma_16x8x16_f16(acc[0], x[2 * i], y[2 * i], x[2 * i + 1], y[2 * i + 1], wl[2 * i], wl[2 * i + 1]);
            skinny::mma_16x8x16_f16(acc[1], x[2 * i], y[2 * i], x[2 * i + 1], y[2 * i + 1], wh[2 * i], wh[2 * i + 1]);
          }
        } else {
          // D tile: tokens g, g + 8 are the MMA's rows, weight row g (n tile
          // 0) or g + 8 (n tile 1) its column.
          const uint4 x = tokens[c][0], y = tokens[c][1];
          skinny::mma_16x8x32<kFp8>(acc[0], x.x, y.x, x.y, y.y, lo.x, lo.y);
          skinny::mma_16x8x32<kFp8>(acc[0], x.z, y.z, x.w, y.w, lo.z, lo.w);
          skinny::mma_16x8x32<kFp8>(acc[1], x.x, y.x, x.y, y.y, hi.x, hi.y);
          skinny::mma_16x8x32<kFp8>(acc[1], x.z, y.z, x.w, y.w, hi.z, hi.w);
        }
      }
      // Every reader arrives itself (release: its reads of the stage come
      // before the producer's next copy into it); one arrival per warp
      // after __syncwarp left compute-sanitizer's racecheck without an
      // order between the other lanes' reads and that copy.
      mbarrier_arrive(smem_address(&smem.empty[slot]));
#pragma unroll
      for (int c = 0; c < kChunksPerWarp; ++c)
#pragma unroll
        for (int h = 0; h < kTokenRows; ++h) tokens[c][h] = next[c][h];
    }

    // The tile's partial sums, added over the warps in order, then the epilogue.
#pragma unroll
    for (int j = 0; j < kNTiles; ++j) {
      skinny::put_partials<kFp8, kTransposed>(smem.partial[warp], acc[j], 0, 8 * j, lane);
    }
    consumer_sync();
    if (stores && col < args.n) {
      skinny::store_output<kFp8>(args, skinny::sum_partials<kFp8>(smem.partial, out_row, out_col), out_row, col, column);
    }
    consumer_sync();  // the sums are read before the next tile's partials overwrite them
  }
}

template <bool kTransposed, bool kFp8>
constexpr int kSmemBytes = static_cast<int>(sizeof(SharedStorage<kTransposed, kFp8>));

// CTAs per SM that skinny_stream_kernel<kTransposed, kFp8> is launched with
// for args (skinny_stream_ctas_per_sm).
template <bool kTransposed, bool kFp8>
int64_t ctas_per_sm(const ScaledMmArgs& args) {
  constexpr auto kernel = skinny_stream_kernel<kTransposed, kFp8>;
  const KernelInfo info = kernel_info<kernel>(args.device.index, kThreads, kSmemBytes<kTransposed, kFp8>);
  const CudaDeviceInfo device = cuda_device_info(args.device.index);
  const int64_t most_per_sm = std::max<int64_t>(1, info.resident_ctas / device.sm_count);
  return skinny_stream_ctas_per_sm((args.n + kColumns - 1) / kColumns, device.sm_count, most_per_sm,
                                   args.m * args.k, cuda_peak_dram_gbps(args.device.index));
}

template <bool kTransposed, bool kFp8, bool kPaddedTokens = false>
void launch(const ScaledMmArgs& args, int64_t per_sm) {
  constexpr auto kernel = skinny_stream_kernel<kTransposed, kFp8, kPaddedTokens>;
  constexpr int kSmem = kSmemBytes<kTransposed, kFp8>;
  (void)kernel_info<kernel>(args.device.index, kThreads, kSmem);  // opts in to > 48 KB of shared memory
  const int64_t tiles = (args.n + kColumns - 1) / kColumns;
  const int64_t ctas = std::min(tiles, per_sm * cuda_device_info(args.device.index).sm_count);
  launch_pdl_kernel(kernel, dim3(static_cast<unsigned>(ctas)), dim3(kThreads), kSmem, as_cuda_stream(args.stream),
                    args.device.index, args);
}

template <bool kTransposed, bool kFp8>
void launch(const ScaledMmArgs& args) {
  launch<kTransposed, kFp8>(args, ctas_per_sm<kTransposed, kFp8>(args));
}

}  // namespace

bool skinny_stream_sm90(const ScaledMmArgs& args) {
  // Bulk copies of B's rows and 16-byte loads of A's, as the register-ring kernel.
  if (args.m > 16 || !operands_aligned(args)) return false;
  const bool fp8 = args.input_dtype != DType::kInt8;
  if (args.m > kSkinnyDecodeTransposedMaxM) {
    fp8 ? launch<false, true>(args) : launch<false, false>(args);
  } else if (!fp8) {
    launch<true, false>(args);
  } else if (const int64_t plain = ctas_per_sm<false, true>(args); plain > 1) {
    // fp8 at M ≤ 8 where two CTAs share an SM: the plain form (tokens
    // padded to 16, each e4m3 word converted once, the padding not at
    // all). The transposed form (ptxas's e4m3 MMA) is 3–4 % faster at one
    // CTA per SM but gains nothing from a second: H200, ties at two per
    // SM, 1.10× faster geomean, up to 1.28× (docs/gemm.md, "CTAs per SM on
    // the H200").
    launch<false, true, true>(args, plain);
  } else {
    launch<true, true>(args);
  }
  QGEMM_CUDA_CHECK(cudaGetLastError());
  return true;
}

}  // namespace qgemm::detail
