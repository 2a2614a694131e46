// fp8 decode GEMM for Hopper (M ≤ 16, sm_90a) on the native e4m3 wgmma:
// Dᵀ = B·Aᵀ, the weight's rows the MMA's M side and the tokens its N = 16,
// both operands read by the tensor cores from shared memory as they are.
//
// Why: the other decode kernel (skinny_stream_sm90.cu) multiplies with
// mma.sync, which sm_90 has no e4m3 form of — ptxas turns each fp8 MMA into
// F2FP conversions of both operands and two f16 MMAs. At M = 9–16 those
// conversions alone take as long as the weight's stream (H200, docs/gemm.md,
// "The stream and the MMAs apart"). wgmma m64n16k32.e4m3 converts nothing.
//
// Tile: 64 weight rows × 16 tokens, one consumer warpgroup (64 rows rather
// than wgmma's 128-row pairs, so that a 4096-row weight still makes 64
// tiles). Stage: 128 bytes of K of the 64 rows and of the 16 tokens, two TMA
// boxes with the 128-byte swizzle the wgmma descriptors read (tokens past M
// and k past K arrive as zeros); 8 stages, 80 KB, two CTAs per SM.
//
//   producer (one thread of warp 4): wait empty[slot] → announce the stage's
//                                    bytes on full[slot] → two TMA copies
//   consumers (warps 0–3):           wait full[slot] → 4 wgmma k32 into a
//                                    stage sum → wait for them → every thread
//                                    arrives on empty[slot] → fp32 acc += sum
//
// The stage sum (scale-d 0 on the stage's first wgmma) is added into fp32
// accumulators once per 128 k: the promotion the precise wgmma mainloops do
// (sm90_configs.h; Hopper's fp8 wgmma accumulates in reduced precision), so
// both Fp8Accumulation modes get the precise result.
//
// K split: where the tiles alone would leave SMs idle, the `splits` CTAs of a
// cluster (grid z) take consecutive ranges of stages of the same tile, leave
// their sums in their shared memory, and every rank adds all ranks' sums of
// its slice of the tile in rank order through distributed shared memory
// (deterministic; no workspace, no memset, nothing in global memory), then
// applies the epilogue of the skinny kernels (skinny_common.cuh) to it.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda_check.h"
#include "core/cuda_cluster.cuh"
#include "core/cuda_device_info.h"
#include "core/cuda_kernel_info.h"
#include "core/cuda_launch.cuh"
#include "core/cuda_mbarrier.cuh"
#include "core/cuda_tma.cuh"
#include "gemm/cuda/decode_wgmma_plan.h"
#include "gemm/cuda/kernels.h"
#include "gemm/cuda/operand_layout.h"
#include "gemm/cuda/skinny_common.cuh"

namespace qgemm::detail {
namespace {

constexpr int kRows = static_cast<int>(kDecodeWgmmaRows);      // weight rows (output columns) per tile
constexpr int kTokens = 16;                                       // wgmma N: tokens past M are zeros
constexpr int kStageK = static_cast<int>(kDecodeWgmmaStageK);  // K bytes per stage: one swizzle atom per row
constexpr int kStages = 8;                                        // 80 KB: two CTAs per SM
constexpr int kConsumers = 128;   // one warpgroup
constexpr int kThreads = kConsumers + 32;
constexpr int kWeightBytes = kRows * kStageK;   // 8 KB
constexpr int kTokenBytes = kTokens * kStageK;  // 2 KB
constexpr int kMaxSplits = 8;                   // the portable cluster size
constexpr int kPitch = kRows + 1;               // partial sums [token][row], padded

struct __align__(1024) Stage {
  uint8_t weight[kWeightBytes];  // 1024-aligned: the swizzle atoms
  uint8_t tokens[kTokenBytes];
};

struct SharedStorage {
  Stage stages[kStages];
  uint64_t full[kStages];
  uint64_t empty[kStages];
  float partial[kTokens][kPitch];
};
static_assert(kDecodeWgmmaCtasPerSm * (sizeof(SharedStorage) + 1024) <= 227 * 1024, "two CTAs per SM");
// + 1 KB so that the kernel can align the dynamic shared memory's start.
constexpr int kSmemBytes = static_cast<int>(sizeof(SharedStorage)) + 1024;

// d += weight[64 × 32] · tokens[16 × 32]ᵀ, e4m3, fp32 sums; scale_d = 0
// overwrites d instead.
__device__ __forceinline__ void wgmma_m64n16k32_e4m3(float (&d)[8], uint64_t weight_desc, uint64_t token_desc,
                                                     int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 {%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "l"(weight_desc), "l"(token_desc), "r"(scale_d));
}

// grid (tiles, 1, splits): tile blockIdx.x, its K split blockIdx.z = the
// CTA's rank in a cluster of `splits` along z.
__global__ void __launch_bounds__(kThreads, 1)
    decode_wgmma_kernel(const ScaledMmArgs args, const __grid_constant__ CUtensorMap weight_map,
                        const __grid_constant__ CUtensorMap token_map) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  wait_for_preceding_grids();
  extern __shared__ unsigned char smem_raw[];
  auto& smem = *reinterpret_cast<SharedStorage*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  const int splits = static_cast<int>(gridDim.z);
  const int rank = static_cast<int>(blockIdx.z);
  const int64_t row0 = static_cast<int64_t>(blockIdx.x) * kRows;
  const int stages_total = static_cast<int>((args.k + kStageK - 1) / kStageK);
  const int first = static_cast<int>(int64_t{stages_total} * rank / splits);
  const int end = static_cast<int>(int64_t{stages_total} * (rank + 1) / splits);

  if (threadIdx.x == kConsumers) {  // the descriptors' first fetch under the barrier setup
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&weight_map)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&token_map)) : "memory");
  }
  init_stage_ring(smem.full, smem.empty, kStages, kConsumers);
  __syncthreads();

  if (threadIdx.x >= kConsumers) {
    if (threadIdx.x == kConsumers) {
      int slot = 0;
      uint32_t phase = 0;
      for (int s = first; s < end; ++s) {
        mbarrier_wait(smem_address(&smem.empty[slot]), phase ^ 1);
        const uint32_t bar = smem_address(&smem.full[slot]);
        mbarrier_expect_bytes(bar, kWeightBytes + kTokenBytes);
        tma_load_2d(smem_address(smem.stages[slot].weight), weight_map, s * kStageK, static_cast<int>(row0), bar);
        tma_load_2d(smem_address(smem.stages[slot].tokens), token_map, s * kStageK, 0, bar);
        if (++slot == kStages) slot = 0, phase ^= 1;
      }
    }
  } else {
    float acc[8] = {}, sum[8] = {};
    int slot = 0;
    uint32_t phase = 0;
    for (int s = first; s < end; ++s) {
      mbarrier_wait(smem_address(&smem.full[slot]), phase);
      const uint64_t weight_desc = wgmma_sw128_descriptor(smem_address(smem.stages[slot].weight));
      const uint64_t token_desc = wgmma_sw128_descriptor(smem_address(smem.stages[slot].tokens));
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int j = 0; j < 4; ++j) wgmma_m64n16k32_e4m3(sum, weight_desc + 2 * j, token_desc + 2 * j, j);
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
      mbarrier_arrive(smem_address(&smem.empty[slot]));
#pragma unroll
      for (int i = 0; i < 8; ++i) acc[i] += sum[i];
      if (++slot == kStages) slot = 0, phase ^= 1;
    }
    // The m64n16 accumulator fragment: warp w, lane (g = lane / 4, t = lane
    // % 4) holds rows 16w + g (+ 8 for the odd pair) and token columns
    // 8i + 2t, 8i + 2t + 1 in acc[4i … 4i + 3].
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const int row = 16 * warp + g + 8 * ((e >> 1) & 1), token = 8 * (e >> 2) + 2 * t + (e & 1);
      smem.partial[token][row] = acc[e];
    }
  }
  if (splits > 1) cluster_sync();
  else __syncthreads();

  // This rank's slice of the tile's 16 × 64 outputs: every rank's sums, in
  // rank order, then the epilogue.
  if (threadIdx.x < kConsumers) {
    const int per_rank = kTokens * kRows / splits;
    for (int e = rank * per_rank + static_cast<int>(threadIdx.x); e < (rank + 1) * per_rank; e += kConsumers) {
      const int token = e / kRows, row = e % kRows;
      const int64_t col = row0 + row;
      if (token >= args.m || col >= args.n) continue;
      float part[kMaxSplits];
#pragma unroll
      for (int r = 0; r < kMaxSplits; ++r) {
        if (r < splits) part[r] = splits > 1 ? cluster_peer(&smem.partial[token][row], r)[0] : smem.partial[token][row];
      }
      float total = part[0];
#pragma unroll
      for (int r = 1; r < kMaxSplits; ++r) {
        if (r < splits) total = __fadd_rn(total, part[r]);
      }
      skinny::store_output<true>(args, total, token, col, skinny::load_column_operands(args, col));
    }
  }
  if (splits > 1) cluster_sync();  // the peers' partial sums are read before any CTA exits
  allow_dependent_launch();
#else
  (void)args;
  __trap();  // launched only on sm_90 (sm90_decode_wgmma checks)
#endif
}

}  // namespace

bool sm90_decode_wgmma(const ScaledMmArgs& args, int sm_count) {
  if (args.input_dtype != DType::kFloat8E4M3 || args.m > kTokens || !operands_aligned(args) ||
      args.k > INT32_MAX || args.n > INT32_MAX) {
    return false;
  }
  constexpr auto kernel = decode_wgmma_kernel;
  const KernelInfo info = kernel_info<kernel>(args.device.index, kThreads, kSmemBytes);  // also opts in > 48 KB
  if (info.arch < 90) return false;
  const int splits = decode_wgmma_splits(args.n, args.k, sm_count, info.max_cluster);
  // Both operands as boxes of 128 bytes of K × the tile's rows, 128-byte
  // swizzle (the layout wgmma_sw128_descriptor reads), zeros outside.
  const CUtensorMap weight_map = tma_map_2d(CU_TENSOR_MAP_DATA_TYPE_UINT8, args.b, args.k, args.n, args.ldb, kStageK,
                                            kRows, CU_TENSOR_MAP_SWIZZLE_128B, "scaled_mm", "the weight");
  const CUtensorMap token_map = tma_map_2d(CU_TENSOR_MAP_DATA_TYPE_UINT8, args.a, args.k, args.m, args.lda, kStageK,
                                           kTokens, CU_TENSOR_MAP_SWIZZLE_128B, "scaled_mm", "the tokens");
  const auto tiles = static_cast<unsigned>(decode_wgmma_tiles(args.n));
  launch_pdl_kernel_in_clusters(kernel, dim3(tiles, 1, static_cast<unsigned>(splits)), dim3(kThreads), kSmemBytes,
                                as_cuda_stream(args.stream), args.device.index, splits, args, weight_map, token_map);
  return true;
}

}  // namespace qgemm::detail
