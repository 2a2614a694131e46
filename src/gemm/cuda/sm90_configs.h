// sm90_configs.h — the Hopper CUTLASS kernel configurations: CTA tile,
// cluster shape and mainloop/epilogue schedule, each with the reason for it.
// dispatch_table.h says which problem shapes get which; sm90_*.cu instantiate
// the configs of their input type for one (input, output) dtype pair (int8:
// 6, precise fp8: 6), sm90_fp8fast_*.cu the five fast-accumulation fp8
// configs (5 × 2 kernels): 34 in all.
//
// 8-bit operands: a K tile of 128 elements is 128 bytes, one full 128-byte
// TMA swizzle row, and four wgmma k-steps of 32.
#pragma once

#include "cute/tensor.hpp"
#include "cutlass/epilogue/dispatch_policy.hpp"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "gemm/cuda/kernels.h"

namespace qgemm::detail::sm90 {

// kOverlap (precise fp8 only): the mainloop of sm90_fp8_overlap.cuh, which
// hides each k-tile's promotion under the next k-tile's wgmma at the cost of
// a third accumulator set.
template <class Tile, class Cluster, class Kernel, class Epi, bool kOverlap = false>
struct Config {
  using TileShape = Tile;
  using ClusterShape = Cluster;
  using KernelSchedule = Kernel;
  using EpilogueSchedule = Epi;
  static constexpr bool kOverlappedPromotion = kOverlap;
};

using cute::_1;
using cute::_2;
using cute::_64;
using cute::_128;
using cute::_256;
using cute::Shape;
using _192 = cute::Int<192>;

// kSm90Wide — large M. Two consumer warpgroups share one 128×256 tile
// (64×256 each: the widest wgmma, the fewest A/B shared-memory bytes per MAC,
// 128 B of smem traffic per 2·64·256 MACs), so the tensor cores, not shared
// memory, are the limit. Cluster 2×1: the two CTAs of a cluster sit on
// neighbouring M tiles and share the B tile through TMA multicast, halving
// B's L2 traffic. 48 KiB per stage leaves room for 4 stages.
using Wide = Config<Shape<_128, _256, _128>, Shape<_2, _1, _1>, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                    cutlass::epilogue::TmaWarpSpecializedCooperative>;

// kSm90Square — medium M and narrow N, where 128×256 tiles leave SMs idle.
// Ping-pong: each consumer warpgroup owns a whole 128×128 tile and their
// mainloops alternate, so one's epilogue hides under the other's MMAs — worth
// most when K is short relative to the tile's epilogue. Cluster 2×1 as above.
using Square = Config<Shape<_128, _128, _128>, Shape<_2, _1, _1>, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                      cutlass::epilogue::TmaWarpSpecialized>;

// kSm90Narrow — M ≤ 128: a 64-row tile (the smallest wgmma M) wastes at most
// half of each MMA instead of three quarters, and twice as many tiles along N
// fill more SMs. Cluster 1×2: CTAs on neighbouring N tiles share the A tile
// by multicast (B, the weight, is read once anyway).
using Narrow = Config<Shape<_64, _128, _128>, Shape<_1, _2, _1>, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                      cutlass::epilogue::TmaWarpSpecialized>;

// kSm90Small1x2 / kSm90Small2x1 — M ≤ 128 on weights too small to fill the
// GPU with 64×128 tiles. A 64×64 tile gives twice Narrow's CTAs along N
// (M ≤ 64, N = 4096: 64 instead of 32 of 132 SMs; M = 65–128: 128 instead
// of 64), so twice the SMs pull the weight; each CTA streams half the bytes.
// Cluster 1×2 (one M tile: neighbours along N share A) for M ≤ 64; cluster
// 2×1 (the two M tiles of M = 65–128 share the weight tile B through TMA
// multicast, so B leaves L2 once) above. H100, same call: 128×4096×14336
// int8 35.1 → 28.3 µs, 64×4096×14336 32.9 → 28.6 (dispatch_table.h has the
// rest). The same tiles for precise fp8 (overlapped promotion: 3 × 32
// accumulator registers) and fast fp8.
// kSm90Narrow2x1 (int8) — M = 65–96 with N ≥ 6144 and M = 193–256 with
// N < 6144 (dispatch_table.h): the 64×128 tile with cluster 2×1, so the M
// tiles' CTAs share the weight tile B by multicast (Narrow's 1×2 shares A,
// the small operand). Precise fp8 has
// had this tile as its kSm90Square (Fp8Square), which ran 256×4096×14336 in
// 34.1 µs where int8's tiles took 42.4–42.8; run_config maps kSm90Narrow2x1
// to it for fp8, so fp8 instantiates nothing new.
using Narrow2x1 = Config<Shape<_64, _128, _128>, Shape<_2, _1, _1>, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                         cutlass::epilogue::TmaWarpSpecialized>;

using Small1x2 = Config<Shape<_64, _64, _128>, Shape<_1, _2, _1>, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                        cutlass::epilogue::TmaWarpSpecialized>;
using Small2x1 = Config<Shape<_64, _64, _128>, Shape<_2, _1, _1>, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                        cutlass::epilogue::TmaWarpSpecialized>;
using Fp8Small1x2 = Config<Shape<_64, _64, _128>, Shape<_1, _2, _1>, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                           cutlass::epilogue::TmaWarpSpecialized, true>;
using Fp8Small2x1 = Config<Shape<_64, _64, _128>, Shape<_2, _1, _1>, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                           cutlass::epilogue::TmaWarpSpecialized, true>;

// fp8 replacements for the two 128-row configs. The fp8 mainloop without
// "fast accumulation" keeps two accumulator sets (wgmma's, promoted into
// fp32 every few k-blocks: see docs/gemm.md), so a warpgroup owning 64×256
// or 128×128 outputs needs 2·128 registers for them alone and ptxas spills
// (~900 B per thread, measured). 64×128 per warpgroup fits, even with the
// overlapped promotion's third set (3 × 64 registers; ptxas: 0 spills):
// kSm90Wide → 128×128×128 cooperative (each warpgroup 64×128), cluster 2×1;
// kSm90Square → 64×128×128 ping-pong, cluster 2×1 (B multicast along M);
// kSm90Narrow → int8's Narrow with the overlapped promotion.
// The overlap made them 5–20 % faster at M = 128–2048 (1024×4096×14336:
// 126.6 → 89.6 µs, 256×4096×4096 17.2 → 14.9; docs/gemm.md).
using Fp8Wide = Config<Shape<_128, _128, _128>, Shape<_2, _1, _1>, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                       cutlass::epilogue::TmaWarpSpecializedCooperative, true>;
using Fp8Square = Config<Shape<_64, _128, _128>, Shape<_2, _1, _1>, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                         cutlass::epilogue::TmaWarpSpecialized, true>;
using Fp8Narrow = Config<Shape<_64, _128, _128>, Shape<_1, _2, _1>, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                         cutlass::epilogue::TmaWarpSpecialized, true>;

// kSm90Wide192 (precise fp8 only) — the largest problems. The widest tile
// CUTLASS's own two accumulator sets fit (each warpgroup owns 64×192 outputs,
// 2 × 96 registers; ptxas: 0 spills under the consumers' 232-register
// setmaxnreg) — too wide for a third set, so it promotes without overlap.
// Against 128×128 it moves 17 % fewer shared-memory bytes per MAC; it won
// where there are many waves of tiles and long K or wide N (8192×57344×8192
// 8476 → 6923 µs, 4096×8192×28672 1941 → 1616 µs against the overlapped
// 128×128) and lost where its coarser tiles fill the SMs worse (M ≤ 2048,
// N ≤ 6144).
using Fp8Wide192 = Config<Shape<_128, _192, _128>, Shape<_2, _1, _1>, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                          cutlass::epilogue::TmaWarpSpecializedCooperative>;

// fp8 with fast accumulation (Fp8Accumulation::kFast, sm90_fp8fast_*.cu):
// CUTLASS's FP8FastAccum schedules let wgmma accumulate over the whole K in
// one accumulator set — no promotion into a second fp32 set — so fp8 fits the
// int8 tiles above exactly: same 8-bit operand bytes per stage, same 128
// accumulator registers per thread (fp32 instead of int32), same wgmma rate.
// The collective builder maps these schedules to the plain
// MainloopSm90TmaGmmaWarpSpecialized (not the …FP8 promoting mainloop), and
// the kernel layer picks the cooperative / ping-pong kernel through their
// base classes.
// kSm90Wide → FastWide: 128×256×128 cooperative, cluster 2×1 (= Wide);
// kSm90Square → FastSquare: 128×128×128 ping-pong, cluster 2×1 (= Square);
// kSm90Narrow → FastNarrow: 64×128×128 ping-pong, cluster 1×2 (= Narrow);
// kSm90Small1x2 / kSm90Small2x1 → FastSmall1x2 / FastSmall2x1 (64×64×128).
using Fp8FastWide = Config<Shape<_128, _256, _128>, Shape<_2, _1, _1>,
                           cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum,
                           cutlass::epilogue::TmaWarpSpecializedCooperative>;
using Fp8FastSquare = Config<Shape<_128, _128, _128>, Shape<_2, _1, _1>,
                             cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum,
                             cutlass::epilogue::TmaWarpSpecialized>;
using Fp8FastNarrow = Config<Shape<_64, _128, _128>, Shape<_1, _2, _1>,
                             cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum,
                             cutlass::epilogue::TmaWarpSpecialized>;
using Fp8FastSmall1x2 = Config<Shape<_64, _64, _128>, Shape<_1, _2, _1>,
                               cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum,
                               cutlass::epilogue::TmaWarpSpecialized>;
using Fp8FastSmall2x1 = Config<Shape<_64, _64, _128>, Shape<_2, _1, _1>,
                               cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum,
                               cutlass::epilogue::TmaWarpSpecialized>;

}  // namespace qgemm::detail::sm90
