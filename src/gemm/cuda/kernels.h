// kernels.h — the scaled-GEMM kernels of the CUDA backend, as the dispatcher
// sees them: an identifier per kernel configuration and one launcher per
// (architecture, input dtype, output dtype) translation unit. No CUTLASS
// types here, so the dispatcher compiles in seconds.
#pragma once

#include <cstdint>

#include "gemm/scaled_mm_args.h"

namespace qgemm::detail {

// Every kernel configuration the dispatch table (dispatch_table.h) can pick.
// The CUTLASS tile / cluster / schedule of each is in sm90_configs.h and
// sm80_configs.h, with the reason for it.
enum class GemmKernel : uint8_t {
  kFallback,   // scaled_mm_fallback.cu: any shape, stride and alignment
  kSkinny,     // skinny_gemm.cu: M ≤ 64, mma.sync, column tiles (persistent for M ≤ 16), K split over warps
  kSm90Wide,    // 128×256×128, cluster 2×1, cooperative
  kSm90Square,  // 128×128×128, cluster 2×1, ping-pong (precise fp8: 64×128×128)
  kSm90Narrow,  // 64×128×128, cluster 1×2, ping-pong
  kSm90Small1x2,  // 64×64×128, cluster 1×2, ping-pong
  kSm90Small2x1,  // 64×64×128, cluster 2×1, ping-pong
  kSm90Narrow2x1,  // 64×128×128, cluster 2×1, ping-pong (int8; precise fp8 runs its kSm90Square, the same tile)
  kSm90Wide192, // 128×192×128, cluster 2×1, cooperative
  kSm80Large,  // 128×128×64, 3 stages, mma.sync (int8: sm_80 code; fp8: sm_89 code)
  kSm80Small,  // 64×128×64, 4 stages, mma.sync (int8: sm_80 code; fp8: sm_89 code)
  kSm90Direct,  // outputs TMA cannot store (N or ldo not a multiple of 8, unaligned out): kSm90Square's
                // tile (precise fp8: its 64×128) with the direct-store epilogue; A and B still through TMA
  kSm90SkinnyStream,  // skinny_stream_sm90.cu: M ≤ 16 on sm_90, kSkinny's tiles and MMAs with the weight
                      // streamed into shared memory by bulk copies (a producer warp, 4 stages)
  kSm90Coop128,  // precise fp8 only: 128×128×128, cluster 2×1, cooperative
  kSm90Wide1x2,  // kSm90Wide's 128×256×128 cooperative tile with cluster 1×2 (odd counts of M tiles)
  kSm90StreamK,  // kSm90Wide1x2's tile and cluster on the stream-K scheduler (needs the call's workspace)
  kSm90Decode,   // M ≤ 16: Dᵀ = B·Aᵀ on 128×16×128 wgmma tiles, stream-K (needs the call's workspace)
  kSm90Wide80,   // 128×80×128, cluster 1×2, cooperative: one 128-row M tile whose N tiles fill one wave
  kSm90Wide96,   // 128×96×128, cluster 1×2, cooperative: the next band of N in one wave
  kSm90Thin48,   // 64×48×128, cluster 1×4, ping-pong: M ≤ 64 on small N, A shared by four CTAs
  kSm90Wide80x4, // kSm90Wide80's tile with cluster 1×4: the A tile shared by four CTAs
  kSm90Wide96x4, // kSm90Wide96's tile with cluster 1×4
  kSm90DecodeWgmma,  // sm90_decode_wgmma.cu: fp8, M ≤ 16, Dᵀ = B·Aᵀ on 64×16 e4m3 wgmma tiles, K split in a cluster
  kSm90Swapped,      // M ≤ 192: Dᵀ = B·Aᵀ on 64×T×128 ping-pong tiles, T = 32, 160 or 192 tokens, cluster 2×1
  kSm90SwappedStreamK,  // M = 129–768: Dᵀ = B·Aᵀ on 128×T×128 cooperative tiles, T = 160 or 192 (M ≤ 192)
                        // or three to eight token tiles of 72–96 (M = 193–768), stream-K (needs the call's
                        // workspace)
  kSm90SwappedHalves,   // M = 129–192: the tokens in two swapped tiles, 64×T×128, T = 80 or 96 (fp8: 72–96),
                        // cluster 1×2; M = 257–384 in four
  kSm90SwappedHalvesStreamK,  // M = 129–192: the tokens in two swapped tiles, 128×T×128 cooperative, T = 80
                              // or 96, cluster 1×2, stream-K (needs the call's workspace)
  kSm90Wide96Pairs,  // kSm90Wide96's tile with cluster 2×1: M = 232–256, the two token tiles share the weight tile
  kSm90Wide80Pairs,  // kSm90Wide80's tile with cluster 2×1: M = 224–256 (with a workspace 248–256), as above
};
constexpr int kGemmKernelCount = 29;
const char* gemm_kernel_name(GemmKernel kernel);

// Launchers: enqueue the GEMM and return true, or return false when the
// kernel cannot take these arguments (the caller then falls back). Each is
// defined only when its translation unit is built (QGEMM_HAS_GEMM_SM90 /
// QGEMM_HAS_GEMM_SM80 / QGEMM_HAS_GEMM_SM89); `sm_count` is the device's
// multiprocessor count.
bool sm90_int8_bf16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count);
bool sm90_int8_fp16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count);
bool sm90_fp8_bf16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count);
bool sm90_fp8_fp16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count);
// fp8 with fast accumulation (args.fp8_fast_accum): kSm90Wide, kSm90Wide192, kSm90Wide1x2,
// kSm90Square, kSm90Narrow, kSm90Small1x2 and kSm90Small2x1 on the int8 tiles
// (sm90_configs.h); false for any other kernel.
bool sm90_fp8fast_bf16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count);
bool sm90_fp8fast_fp16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count);
// kSm90StreamK: int8, precise fp8 or fast fp8 (args.input_dtype,
// args.fp8_fast_accum); data-parallel where args.workspace is too small.
bool sm90_streamk_bf16(const ScaledMmArgs& args, int sm_count);
bool sm90_streamk_fp16(const ScaledMmArgs& args, int sm_count);
// kSm90Wide80, kSm90Wide96 and their pairs (kSm90Wide80Pairs, kSm90Wide96Pairs): int8, precise fp8 or fast fp8
// (args.input_dtype, args.fp8_fast_accum); false for any other kernel.
bool sm90_one_wave_bf16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count);
bool sm90_one_wave_fp16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count);
// kSm90Thin48, kSm90Wide80x4 and kSm90Wide96x4 (the cluster-1×4 tiles):
// int8, precise fp8 or fast fp8; false for any other kernel.
bool sm90_cluster4_bf16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count);
bool sm90_cluster4_fp16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count);
// kSm90Decode: int8 or precise fp8 (args.input_dtype; fast fp8 runs precise);
// false without a workspace large enough or with M > 16.
bool sm90_decode_bf16(const ScaledMmArgs& args, int sm_count);
bool sm90_decode_fp16(const ScaledMmArgs& args, int sm_count);
// kSm90Swapped: int8 or precise fp8 (args.input_dtype; fast fp8 runs
// precise); false with M > 192.
bool sm90_swapped_bf16(const ScaledMmArgs& args, int sm_count);
bool sm90_swapped_fp16(const ScaledMmArgs& args, int sm_count);
// kSm90SwappedStreamK: int8 or precise fp8 (fast fp8 runs precise); false
// with M > 768 or without a workspace large enough.
bool sm90_swapped_streamk_bf16(const ScaledMmArgs& args, int sm_count);
bool sm90_swapped_streamk_fp16(const ScaledMmArgs& args, int sm_count);
// kSm90SwappedHalves: int8 or precise fp8 (fast fp8 runs precise); false
// unless M = 129–192 or 257–384.
bool sm90_swapped_halves_bf16(const ScaledMmArgs& args, int sm_count);
bool sm90_swapped_halves_fp16(const ScaledMmArgs& args, int sm_count);
// kSm90SwappedHalvesStreamK: int8 or precise fp8 (fast fp8 runs precise);
// false unless M = 129–192, or without a workspace large enough.
bool sm90_swapped_halves_streamk_bf16(const ScaledMmArgs& args, int sm_count);
bool sm90_swapped_halves_streamk_fp16(const ScaledMmArgs& args, int sm_count);
// kSm90Direct, int8 or precise fp8 (args.input_dtype).
bool sm90_direct_bf16(const ScaledMmArgs& args, int sm_count);
bool sm90_direct_fp16(const ScaledMmArgs& args, int sm_count);
bool sm80_int8_bf16(GemmKernel kernel, const ScaledMmArgs& args);
bool sm80_int8_fp16(GemmKernel kernel, const ScaledMmArgs& args);
// fp8 e4m3 on the kSm80Large / kSm80Small tiles (Ada and later).
bool sm89_fp8_bf16(GemmKernel kernel, const ScaledMmArgs& args);
bool sm89_fp8_fp16(GemmKernel kernel, const ScaledMmArgs& args);
bool skinny_gemm(const ScaledMmArgs& args, int sm_count);
// kSm90SkinnyStream (QGEMM_HAS_GEMM_SKINNY_SM90): M ≤ 16, int8 or fp8.
bool skinny_stream_sm90(const ScaledMmArgs& args);
// kSm90DecodeWgmma (QGEMM_HAS_GEMM_SKINNY_SM90): fp8 (either accumulation:
// it runs precise), M ≤ 16, A and B loadable by TMA (operands_aligned).
bool sm90_decode_wgmma(const ScaledMmArgs& args, int sm_count);

// kSm90StreamK's workspace on `sm_count` SMs. CUTLASS's stream-K scheduler
// splits at most two waves of tiles (the last full one and the partial one
// after it), and keeps a tile's 32-bit partial sums (128×256 × 4 bytes) and
// one 32-bit flag per consumer warpgroup for each, in lines of 128 bytes.
// With less, the kernel runs data-parallel (run_stream_k_config,
// sm90_stream_k.cuh).
constexpr int64_t kStreamKTileBytes = 128 * 256 * 4;
constexpr int64_t stream_k_workspace_bytes(int sm_count) { return 2 * int64_t{sm_count} * (kStreamKTileBytes + 64); }

// The skinny kernels' M ≤ 16 tiling (skinny_gemm.cu, launch_decode; the
// Hopper twin skinny_stream_sm90.cu): 16-column tiles, the transposed form
// up to M = 8, and the register-ring kernel's "wide" shape's resident CTAs
// (256 threads) per SM: 3, or up to 4 where a build for 4 (launch bound 4:
// ≤ 64 registers) exists — the transposed M ≤ 8 kernels and plain int8
// (plain fp8 would spill 68 bytes).
constexpr int kSkinnyDecodeColumns = 16;
constexpr int kSkinnyDecodeWideCtasPerSm = 3;
constexpr int skinny_decode_wide_ctas_per_sm(bool transposed, bool fp8) { return transposed || !fp8 ? 4 : 3; }
constexpr int64_t kSkinnyDecodeTransposedMaxM = 8;

}  // namespace qgemm::detail
