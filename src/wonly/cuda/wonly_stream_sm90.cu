// Weight-only decode kernel for Hopper (M ≤ 16, sm_90): the decode kernel's
// MMAs and dequantization (wonly_gemv.cu), with the weight streamed into
// shared memory by bulk asynchronous copies instead of register loads, as the
// scaled GEMM's decode kernel does (gemm/cuda/skinny_stream_sm90.cu).
//
// Why: wonly_gemv keeps its weight loads in flight in registers, so the
// registers bound both the bytes in flight and the resident warps (the
// 64-row M = 9–16 int4 shape: 232 registers, 8 warps per SM), and its chain
// load → dequantize → MMA → reload waits on DRAM. Here one producer warp
// keeps kStages stages of a tile's weight rows requested and refills each as
// soon as the consumers have read it, across tile boundaries; the consumer
// warps only wait for shared memory, and for their tokens' activations and
// the parameters, which they load one stage ahead (L1 / L2).
//
// CTA: 8 consumer warps + 1 producer warp, persistent over the ⌈N / kRows⌉
// row tiles (tile blockIdx.x, + gridDim.x, …), kRows = 16·kTiles. A stage
// holds 8 K tiles of 64 bytes (4 chunks of 16 bytes: 128 int4 / 64 int8
// elements) of each of the tile's rows; consumer warp w multiplies K tile w
// of every stage. Shared-memory layout of a stage, per block of 16 rows:
//
//   plain:      [16 rows][512 B + 64 B pad]   row r's stage slice in one
//               bulk copy; the pad puts rows g and g + 8 of a quarter warp's
//               16-byte reads in distinct banks
//   prepacked:  [8 K tiles][16 rows][64 B]    the stored layout: one bulk
//               copy of 8 KB per 16-row block
//
// Lane (g = lane/4, t = lane%4) of warp w reads chunk t of K tile w of rows
// g and g + 8 of each m16 tile, exactly what wonly_gemv's lane reads from
// global memory, so the MMA step (mma_chunk_word, wonly_device.cuh) is the
// same. K is walked forward on a CTA's even tiles and backward on its odd
// ones (the next tile starts on the activations its predecessor read last,
// still in L1). After a tile's last stage the consumers add their partial
// sums in shared memory in warp order while the producer already fills the
// next tile's stages; then bias and rounding (wonly_device.cuh).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "core/cuda_check.h"
#include "core/cuda_device_info.h"
#include "core/cuda_kernel_info.h"
#include "core/cuda_launch.cuh"
#include "core/cuda_mbarrier.cuh"
#include "wonly/cuda/wonly_cuda.h"
#include "wonly/cuda/wonly_device.cuh"

namespace qgemm::detail {
namespace {

using namespace wonly;

constexpr int kConsumerBarrier = 1;  // named barrier over the consumer warps

// The shape of a kWarps-consumer CTA: one 64-byte K tile per consumer warp
// per stage.
template <int kWarps>
struct StageShape {
  static constexpr int kThreads = (kWarps + 1) * 32;
  static constexpr int kKTiles = kWarps;             // K tiles per stage
  static constexpr int kRowBytes = kKTiles * 64;     // bytes of each row per stage
  static constexpr int kPlainPitch = kRowBytes + 64;  // plain layout: bytes per row in shared memory
  static constexpr int kBlockBytes = 16 * kPlainPitch;  // per 16-row block (≥ the prepacked kKTiles × 1024)
  static_assert(kPlainPitch % 128 == 64, "rows g and g + 8 of a quarter warp in distinct banks");
  static_assert(kKTiles * 1024 <= kBlockBytes, "a prepacked block's stage fits its slot");
};

// ~100 KB of weight stages.
template <int kWarps, int kTiles>
constexpr int kStages = std::max(3, 100 * 1024 / (kTiles * StageShape<kWarps>::kBlockBytes));

template <int kWarps, int kTiles, int kTokenBlocks>
struct SharedStorage {
  static constexpr int kAcc = kTiles * kTokenBlocks * 4;  // accumulator registers per lane
  uint8_t stages[kStages<kWarps, kTiles>][kTiles * StageShape<kWarps>::kBlockBytes];
  uint64_t full[kStages<kWarps, kTiles>];   // the stage's bytes have landed
  uint64_t empty[kStages<kWarps, kTiles>];  // every consumer thread has read the stage
  float partial[kWarps][kAcc][32];
};

template <int kWarps>
__device__ __forceinline__ void consumer_sync() {
  asm volatile("bar.sync %0, %1;\n" ::"n"(kConsumerBarrier), "n"(kWarps * 32) : "memory");
}

// A lane's pointers to the scales and offsets of its rows g and g + 8 of
// each m16 tile of one row tile (rows past N: row N − 1), set once per tile.
template <bool kParams16, int kTiles>
struct TileParams {
  using Param = std::conditional_t<kParams16, uint16_t, float>;
  const Param* s[kTiles][2];
  const Param* o[kTiles][2];
};

template <bool kParams16, int kTiles>
__device__ __forceinline__ TileParams<kParams16, kTiles> tile_params(const WeightOnlyArgs& args, int64_t tile,
                                                                     int g) {
  using Param = typename TileParams<kParams16, kTiles>::Param;
  TileParams<kParams16, kTiles> p;
#pragma unroll
  for (int r = 0; r < kTiles; ++r)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t row = min(tile * (16 * kTiles) + r * 16 + h * 8 + g, args.n - 1);
      p.s[r][h] = static_cast<const Param*>(args.scales) + row * args.ld_scales;
      p.o[r][h] = args.offsets ? static_cast<const Param*>(args.offsets) + row * args.ld_offsets : p.s[r][h];
    }
  return p;
}

template <bool kBf16, bool kParams16, bool kInt4, int kTokenBlocks, int kTiles, int kWarps>
__global__ void __launch_bounds__(StageShape<kWarps>::kThreads, 1) wonly_stream_kernel(const WeightOnlyArgs args) {
  wait_for_preceding_grids();
  allow_dependent_launch();
  using Shape = StageShape<kWarps>;
  constexpr int kRows = 16 * kTiles;
  constexpr int kStageCount = kStages<kWarps, kTiles>;
  constexpr int kElems = kInt4 ? 32 : 16;  // elements per 16-byte chunk
  using Storage = SharedStorage<kWarps, kTiles, kTokenBlocks>;
  constexpr int kAcc = Storage::kAcc;
  extern __shared__ __align__(128) uint8_t smem_raw[];
  auto& smem = *reinterpret_cast<Storage*>(smem_raw);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStageCount; ++s) {
      mbarrier_init(smem_address(&smem.full[s]), 1);
      mbarrier_init(smem_address(&smem.empty[s]), kWarps * 32);
    }
    mbarrier_init_fence();
  }
  __syncthreads();

  const int64_t tiles = (args.n + kRows - 1) / kRows;
  const int chunks = static_cast<int>(args.chunks_per_row());
  const int k_stages = (chunks + 4 * Shape::kKTiles - 1) / (4 * Shape::kKTiles);
  const bool prepacked = args.prepacked;

  if (warp == kWarps) {
    // Producer. Plain: lane r copies the stage slice of rows r, r + 32 (rows
    // past N copy row N − 1: their outputs are never stored). Prepacked:
    // lane b < kTiles copies 16-row block b's stage (blocks past the weight
    // copy its last; its rows past N are the stored zero padding).
    const uint64_t policy = l2_evict_first_policy();
    const int64_t row_blocks = (args.n + 15) / 16;
    uint32_t it = 0;  // stages issued: slot it % kStages, pass it / kStages
    bool backward = false;
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x, backward = !backward) {
      for (int step = 0; step < k_stages; ++step, ++it) {
        const int s = backward ? k_stages - 1 - step : step;
        const uint32_t slot = it % kStageCount;
        mbarrier_wait(smem_address(&smem.empty[slot]), ((it / kStageCount) & 1u) ^ 1u);
        const int first_chunk = s * 4 * Shape::kKTiles;
        const uint32_t full = smem_address(&smem.full[slot]);
        uint8_t* stage = smem.stages[slot];
        if (prepacked) {
          const auto bytes = static_cast<uint32_t>(min(Shape::kKTiles, (chunks + 3) / 4 - s * Shape::kKTiles) * 1024);
          if (lane == 0) mbarrier_expect_bytes(full, kTiles * bytes);
          __syncwarp();
          if (lane < kTiles) {
            const int64_t block = min(tile * kTiles + lane, row_blocks - 1);
            bulk_copy_to_shared(smem_address(stage + lane * Shape::kBlockBytes),
                                args.w + args.w_addr.chunk_offset(block * 16, first_chunk), bytes, full, policy);
          }
        } else {
          const auto bytes = static_cast<uint32_t>(min(4 * Shape::kKTiles, chunks - first_chunk) * 16);
          if (lane == 0) mbarrier_expect_bytes(full, kRows * bytes);
          __syncwarp();
#pragma unroll
          for (int r = lane; r < kRows; r += 32) {
            const int64_t row = min(tile * kRows + r, args.n - 1);
            bulk_copy_to_shared(smem_address(stage + (r / 16) * Shape::kBlockBytes + (r % 16) * Shape::kPlainPitch),
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
      offset[r][h] = r * Shape::kBlockBytes + 16 * t +
                     (prepacked ? (g + 8 * h) * 64 + warp * 1024 : (g + 8 * h) * Shape::kPlainPitch + warp * 64);
    }
  const uint16_t* token[kTokenBlocks];
#pragma unroll
  for (int b = 0; b < kTokenBlocks; ++b) {
    token[b] = static_cast<const uint16_t*>(args.a) + (b * 8 + g < args.m ? b * 8 + g : 0) * args.lda;
  }
  const int shift = chunk_group_shift<kInt4>(args);
  const bool has_offsets = args.offsets != nullptr;

  uint32_t it = 0;
  bool backward = false;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x, backward = !backward) {
    const TileParams<kParams16, kTiles> params = tile_params<kParams16, kTiles>(args, tile, g);
    float acc[kTiles][kTokenBlocks][4] = {};
    for (int step = 0; step < k_stages; ++step, ++it) {
      const int s = backward ? k_stages - 1 - step : step;  // as the producer's
      // This stage's activations and parameters, requested before the
      // stage is waited for; chunks past K (a partial last stage or K tile)
      // are zeros on every side.
      const int chunk = (s * Shape::kKTiles + warp) * 4 + t;
      const bool valid = chunk < chunks;
      const int group = chunk >> shift;
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
          scale[r][h] = valid ? load_param<kBf16>(params.s[r][h] + group) : 0.0f;
          offs[r][h] = valid && has_offsets ? load_param<kBf16>(params.o[r][h] + group) : 0.0f;
        }

      const uint32_t slot = it % kStageCount;
      mbarrier_wait(smem_address(&smem.full[slot]), (it / kStageCount) & 1u);
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
          mma_chunk_word<kBf16, kInt4>(lo, hi, param2<kBf16>(scale[r][0]), param2<kBf16>(offs[r][0]),
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
    consumer_sync<kWarps>();
    for (int i = threadIdx.x; i < kAcc * 32; i += kWarps * 32) {
      const int reg = i / 32, src_lane = i % 32;
      const int r = reg / (kTokenBlocks * 4), b = (reg / 4) % kTokenBlocks, e = reg % 4;
      const int64_t row = tile * kRows + r * 16 + (src_lane >> 2) + (e >= 2 ? 8 : 0);
      const int64_t tok = b * 8 + 2 * (src_lane & 3) + (e & 1);
      if (row < args.n && tok < args.m) {
        float sum = 0.0f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) sum = __fadd_rn(sum, smem.partial[w][reg][src_lane]);
        store_output<kBf16>(args, tok, row, sum);
      }
    }
    consumer_sync<kWarps>();  // the sums are read before the next tile's partials overwrite them
  }
}

template <bool kBf16, bool kParams16, bool kInt4, int kTokenBlocks, int kTiles, int kWarps>
void launch(const WeightOnlyArgs& args) {
  constexpr auto kernel = wonly_stream_kernel<kBf16, kParams16, kInt4, kTokenBlocks, kTiles, kWarps>;
  constexpr int kThreads = StageShape<kWarps>::kThreads;
  constexpr int kSmem = static_cast<int>(sizeof(SharedStorage<kWarps, kTiles, kTokenBlocks>));
  const KernelInfo info = kernel_info<kernel>(args.device.index, kThreads, kSmem);  // also opts in > 48 KB
  const int64_t tiles = (args.n + 16 * kTiles - 1) / (16 * kTiles);
  launch_pdl_kernel(kernel, dim3(static_cast<unsigned>(std::min(tiles, info.resident_ctas))), dim3(kThreads), kSmem,
                    as_cuda_stream(args.stream), args.device.index, args);
}

template <bool kBf16, bool kParams16, bool kInt4, int kTiles>
void launch_warps(const WeightOnlyArgs& args) {
  static const int warps = [] {
    const char* e = std::getenv("QGEMM_SCRATCH_STREAM_WARPS");  // scratch A/B switch
    return e ? std::atoi(e) : 12;
  }();
  const bool two = args.m > 8;
  if (warps == 8) two ? launch<kBf16, kParams16, kInt4, 2, kTiles, 8>(args) : launch<kBf16, kParams16, kInt4, 1, kTiles, 8>(args);
  else if (warps == 16) two ? launch<kBf16, kParams16, kInt4, 2, kTiles, 16>(args) : launch<kBf16, kParams16, kInt4, 1, kTiles, 16>(args);
  else two ? launch<kBf16, kParams16, kInt4, 2, kTiles, 12>(args) : launch<kBf16, kParams16, kInt4, 1, kTiles, 12>(args);
}

template <bool kBf16, bool kParams16, bool kInt4>
void launch_rows(const WeightOnlyArgs& args, int rows) {
  if (rows == 16) launch_warps<kBf16, kParams16, kInt4, 1>(args);
  else launch_warps<kBf16, kParams16, kInt4, 2>(args);
}

}  // namespace

void launch_wonly_stream(const WeightOnlyArgs& args, int rows) {
  const bool bf16 = args.dtype == DType::kBFloat16;
  const auto go = [&](auto bf16_c, auto params16_c, auto int4_c) {
    launch_rows<decltype(bf16_c)::value, decltype(params16_c)::value, decltype(int4_c)::value>(args, rows);
  };
  using T = std::true_type;
  using F = std::false_type;
  if (bf16) {
    if (args.params16) args.int4 ? go(T{}, T{}, T{}) : go(T{}, T{}, F{});
    else args.int4 ? go(T{}, F{}, T{}) : go(T{}, F{}, F{});
  } else {
    if (args.params16) args.int4 ? go(F{}, T{}, T{}) : go(F{}, T{}, F{});
    else args.int4 ? go(F{}, F{}, T{}) : go(F{}, F{}, F{});
  }
  QGEMM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace qgemm::detail
