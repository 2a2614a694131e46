// sm90_configs.h — the Hopper CUTLASS kernel configurations: CTA tile,
// cluster shape and mainloop/epilogue schedule, each with the reason for it.
// dispatch_table.h says which problem shapes get which. Instantiated per
// (input, output) pair: sm90_{int8,fp8}_*.cu 8 configs each, sm90_fp8fast_*.cu
// the 7 fast-accumulation fp8 configs (46 kernels); sm90_streamk_*.cu
// Wide1x2's three (int8, precise fp8, fast fp8) on the stream-K scheduler
// (3 × 2, sm90_stream_k.cuh); sm90_decode_*.cu the swapped decode tile for
// int8 and precise fp8 (2 × 2, sm90_decode.cuh); sm90_one_wave_*.cu the
// 128×80 and 128×96 tiles for all three (6 × 2); sm90_cluster4_*.cu the
// cluster-1×4 tiles 64×48, 128×80 and 128×96 for all three (9 × 2);
// sm90_direct_*.cu the direct-store kernel (2 × 2); sm90_swapped_*.cu the
// swapped 64×32, 64×160 and 64×192 tiles for int8 and precise fp8 (6 × 2);
// sm90_swapped_streamk_*.cu the swapped stream-K 128×160 and 128×192 tiles
// for int8 and precise fp8 (4 × 2); sm90_swapped_halves_*.cu the swapped
// 64×80 and 64×96 tiles (4 × 2) and sm90_swapped_halves_streamk_*.cu their
// 128×80 and 128×96 stream-K twins (4 × 2), both for int8 and precise fp8:
// 126 sm90 kernels.
//
// 8-bit operands: a K tile of 128 elements is 128 bytes, one full 128-byte
// TMA swizzle row, and four wgmma k-steps of 32.
#pragma once

#include "cute/tensor.hpp"
#include "cutlass/epilogue/dispatch_policy.hpp"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "gemm/cuda/kernels.h"

namespace qgemm::detail::sm90 {

// kSlices (precise fp8 only; int8 and fast fp8 ignore it): how the mainloop
// promotes the wgmma partial sums into fp32 once per k-tile, hidden under the
// next wgmma batch (sm90_fp8_overlap.cuh):
//   1 — two partial sets of the whole warpgroup tile;
//   2, 4 — the tile's batch in that many N-slices, two partial sets of one
//          slice (for tiles too wide for three whole sets);
//   0 — CUTLASS's FP8 mainloop, which promotes without overlap.
template <class Tile, class Cluster, class Kernel, class Epi, int kSlices = 0, bool kStaged = false>
struct Config {
  using TileShape = Tile;
  using ClusterShape = Cluster;
  using KernelSchedule = Kernel;
  using EpilogueSchedule = Epi;
  static constexpr int kPromotionSlices = kSlices;
  // The epilogue's vectors staged in shared memory during the mainloop by
  // the epilogue load warp (sm90_staged_vectors.cuh); cooperative tiles only.
  static constexpr bool kStagedVectors = kStaged;
};

using cute::_1;
using cute::_16;
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

// kSm90Wide1x2 — Wide's tile with cluster 1×2, for an odd number of M
// tiles. The persistent scheduler hands out whole clusters, so with 2×1 an
// odd M-tile count leaves one CTA of each cluster in the last M row computing
// zeros (TMA fills past M) while it occupies an SM: 384×10240 is 3 × 40 tiles
// but 4 × 40 = 160 cluster slots, two waves on 132 SMs instead of one. With
// 1×2 the pair shares the A tile by multicast along N (every grid N is an
// even number of 256-column tiles) and no slot is wasted.
using Wide1x2 = Config<Shape<_128, _256, _128>, Shape<_1, _2, _1>, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
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
                           cutlass::epilogue::TmaWarpSpecialized, 1>;
using Fp8Small2x1 = Config<Shape<_64, _64, _128>, Shape<_2, _1, _1>, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                           cutlass::epilogue::TmaWarpSpecialized, 1>;

// kSm90Decode (sm90_decode.cuh) — M ≤ 16 with the operands swapped, Dᵀ =
// B·Aᵀ: the weight's channels are the tile's 128 rows (two consumer
// warpgroups of m64n16k32 wgmmas), the ≤ 16 tokens its 16 columns. A stage
// is 16 KB of weight and 2 KB of tokens; the builder fits 12 (216 KB in
// flight per SM). Cooperative: CUTLASS's stream-K scheduler takes only
// that kernel. Precise fp8 runs CUTLASS's promoting FP8 mainloop (kSlices
// 0): the accumulators are 8 registers, the promotion costs nothing.
using Decode = Config<Shape<_128, _16, _128>, Shape<_1, _1, _1>, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                      cutlass::epilogue::TmaWarpSpecializedCooperative>;

// The swapped tiles (Dᵀ = B·Aᵀ, below): the weight's channels are the tile's
// rows, the tokens its kTokens columns, k 128 deep, in clusters of
// `Cluster`. 64 channels run ping-pong, 128 cooperative (two consumer
// warpgroups of 64: CUTLASS's stream-K scheduler takes only that kernel);
// precise fp8 promotes per warpgroup with two whole partial sets (kSlices 1:
// 3 · kTokens / 2 registers) where the tokens are a half of M (80 or 96), in 2
// slices of kTokens / 2 (kTokens + 2 · kTokens / 4) where they are all of it
// (160 or 192: three whole sets of 80 would be 240 registers). The four
// swapped kernels differ only in these two shapes.
template <int kTokens, class Cluster, int kSlices = 0>
using SwappedPingpongTile = Config<Shape<_64, cute::Int<kTokens>, _128>, Cluster,
                                   cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                                   cutlass::epilogue::TmaWarpSpecialized, kSlices>;
template <int kTokens, class Cluster, int kSlices = 0>
using SwappedCooperativeTile = Config<Shape<_128, cute::Int<kTokens>, _128>, Cluster,
                                      cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                                      cutlass::epilogue::TmaWarpSpecializedCooperative, kSlices>;

// kSm90Swapped (sm90_swapped.cuh) — M = 17–32 and 129–192 with the operands swapped,
// Dᵀ = B·Aᵀ, so that no tile is mostly padding. TMA fills a box's rows past
// M with zeros at a cost per row, and a 128-row tile at M = 160 reads 96 of
// them per k-tile: on the H200 128×128 ping-pong took 40.9 µs at
// 160×8192×8192 and 29.3 at 256×… (and 115.4 at 128×8192×28672, whose
// cluster 2×1 pairs every tile with an all-padding one, against 84.9 at
// 256×…; bench/results/gemm-h200-sweep-small-m-02668d8.json). Swapped, the
// weight's channels are the tile's 64 rows (the smallest wgmma M: N/64
// tiles, 128 at N = 8192) and the tokens its kTokens columns (32, 160 or
// 192: a wgmma N is any multiple of 8, so the columns past M are at most 31
// where the dispatch uses it; at M = 17–32 the 64-row tiles pad 32–47).
// Ping-pong, as the 64-row tiles above; cluster 2×1: two channel tiles
// share the token tile by multicast. Precise fp8 promotes in 2 slices of
// kTokens / 2 (kTokens + 2 · kTokens / 4 registers).
template <int kTokens>
using Swapped = SwappedPingpongTile<kTokens, Shape<_2, _1, _1>>;
template <int kTokens>
using Fp8Swapped = SwappedPingpongTile<kTokens, Shape<_2, _1, _1>, 2>;

// kSm90SwappedHalves (sm90_swapped.cuh) — the swapped tiles with M =
// 129–192 in two token tiles of 80 or 96 columns (precise fp8: 72, 80, 88
// or 96, the narrowest that holds M; docs/gemm.md, "The token halves fitted
// to M"), in clusters of 1×2: the
// two token tiles of one 64-channel tile share its weight tile by multicast,
// so each weight byte crosses from L2 once, not once per half. Against
// Swapped's 2×1 (two channel tiles sharing the token tile), H200, same
// call: int8 0.79–0.95× the time (geomean 0.87), precise fp8 0.78–1.01×
// (0.96), M = 136–192 × N = 2560–4096 × K = 4096–28672
// (bench/results/gemm-h200-swapped-halves-cluster{2x1,1x2}-8bdcf97.json). ncu at
// 160×4096×28672 had shown the 2×1 halves at 52 % of DRAM bandwidth with
// an L2 hit rate of 55 %, against cuBLASLt's 128×80 split-K kernel in
// clusters of 1×2 at 72 % and 25 % (bench/results/ncu/
// gemm-h200-160x4096x28672-05428e8.txt).
// Precise fp8 with two whole partial sets (120 or 144 registers): each
// k-tile one batch of four m64n80k32 / m64n96k32 wgmmas, whose promotion
// runs under the next, where 2 slices issued two batches of half that width
// and promoted twice per k-tile. H200, same kernels otherwise, two calls
// with int8 and cuBLASLt as controls (within ±0.6 %): 0.88–0.98× the time
// (geomean 0.92) at M = 136 / 160 / 192 × N = 2560 / 4096 × K = 4096 /
// 14336, 160×2560×14336 27.6 → 24.5 µs, 136×2560×4096 13.2 → 12.2
// (bench/results/gemm-h200-m129-192-small-n-sweep-{15b1318,whole-sets}.json).
template <int kTokens>
using SwappedHalves = SwappedPingpongTile<kTokens, Shape<_1, _2, _1>>;
template <int kTokens>
using Fp8SwappedHalves = SwappedPingpongTile<kTokens, Shape<_1, _2, _1>, 1>;

// kSm90SwappedStreamK (sm90_swapped_stream_k.cuh) — M = 129–192 on weights
// whose 64-channel tiles leave SMs idle (N = 4096: 64 tiles on 132 SMs, each
// streaming its whole K). Swapped as above, but 128 channels (two consumer
// warpgroups of 64: CUTLASS's stream-K scheduler takes only the cooperative
// kernel) by kTokens, and the scheduler cuts tiles along K so that every SM
// works. Per warpgroup the same 64×kTokens accumulators as Swapped, and
// precise fp8 promotes in the same 2 slices. Cluster 1×1: two channel
// tiles sharing the token tile (2×1) took 0.94–1.06× the time on the H200,
// geomean 1.00 (bench/results/gemm-h200-swapped-stream-k-sweep.json).
template <int kTokens>
using SwappedStreamK = SwappedCooperativeTile<kTokens, Shape<_1, _1, _1>>;
template <int kTokens>
using Fp8SwappedStreamK = SwappedCooperativeTile<kTokens, Shape<_1, _1, _1>, 2>;
// The same kernel at M = 193–768 with the tokens in three to eight tiles
// (swapped_token_tiles): int8 on SwappedStreamK<80> or <96>, precise fp8 on
// 72, 80, 88 or 96 columns with two whole partial sets — 72 and 88 split in
// two would give wgmmas of N = 36 and 44, which Hopper does not have.
// cuBLASLt's fp8 kernels at M = 200–224 are this shape (128×72 / 128×80
// swapped, three token tiles;
// bench/results/cublaslt-fp8-kernel-names-m193-256-h200.txt).
template <int kTokens>
using Fp8SwappedTokenTiles = SwappedCooperativeTile<kTokens, Shape<_1, _1, _1>, 1>;

// kSm90SwappedHalvesStreamK (sm90_swapped_stream_k.cuh) — M = 129–192 in
// two token tiles of 80 or 96 columns, as SwappedHalves, on long K: 128
// channels (two consumer warpgroups of 64) in clusters of 1×2 (the weight
// tile multicast to both token tiles), the tiles cut along K by the stream-K
// scheduler. What it gains over SwappedHalves: the halves' ping-pong CTA
// owns one tile, so one warpgroup's wgmmas and fp8 promotions run while the
// other waits; here both work on every k-tile, and the cut keeps every SM
// busy at N = 2048–4096 (N/128 · 2 tiles). cuBLASLt's fp8 kernel at
// 160×4096×28672 is this shape (128×80, split in two along K, 1×2;
// bench/results/ncu/gemm-h200-160x4096x28672-05428e8.txt). Against the
// 128×160 / 128×192 stream-K tiles (SwappedStreamK, 1×1) at N = 2048–4096
// and K = 8192–28672, H200, same call: 0.62–0.90× their time for precise
// fp8 and 0.79–0.95× for int8, but at N = 28672 1.01–1.19× and at
// 10240×4096 1.11–1.18× (bench/results/gemm-h200-swapped-halves-stream-k-
// sweep-13996e7.json): the two stay separate kernels.
// Precise fp8 with two whole partial sets, as SwappedHalves: 0.97–0.99× the
// time of 2 slices in the same calls.
template <int kTokens>
using SwappedHalvesStreamK = SwappedCooperativeTile<kTokens, Shape<_1, _2, _1>>;
template <int kTokens>
using Fp8SwappedHalvesStreamK = SwappedCooperativeTile<kTokens, Shape<_1, _2, _1>, 1>;

// Precise fp8 keeps a partial accumulator set next to the fp32 one (wgmma's
// sums, promoted into fp32 once per k-tile: see docs/gemm.md), two with the
// overlapped promotion. The tiles and their promotion (kSlices above):
// kSm90Wide → 128×256×128 cooperative, cluster 2×1 — int8's Wide tile. Each
// warpgroup owns 64×256 outputs (128 registers) and promotes in 4 slices of
// 64 columns (2 × 32 more registers; ptxas: 0 spills under the consumers'
// 232-register setmaxnreg). The highest MMA per shared-memory byte: on the
// H100, 850 µs at 8192³ against 977 for 128×128 and 907 for 128×192, the
// fastest tile wherever its tiles fill their waves (tile_model.h).
// kSm90Coop128 → 128×128×128 cooperative (each warpgroup 64×128: three whole
// sets, 3 × 64 registers), cluster 2×1 — the most tiles, for problems whose
// larger tiles fill the SMs badly.
// kSm90Square → 64×128×128 ping-pong, cluster 2×1 (B multicast along M);
// kSm90Narrow → int8's Narrow; kSm90Small* → int8's Small tiles.
// The overlap made the 64×128 and 128×128 tiles 5–20 % faster at M =
// 128–2048 (1024×4096×14336: 126.6 → 89.6 µs, 256×4096×4096 17.2 → 14.9),
// the slices 128×192 5–12 % and let 128×256 run at all (docs/gemm.md).
using Fp8Wide = Config<Shape<_128, _256, _128>, Shape<_2, _1, _1>, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                       cutlass::epilogue::TmaWarpSpecializedCooperative, 4>;
using Fp8Wide1x2 = Config<Shape<_128, _256, _128>, Shape<_1, _2, _1>, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                          cutlass::epilogue::TmaWarpSpecializedCooperative, 4>;
using Fp8Coop128 = Config<Shape<_128, _128, _128>, Shape<_2, _1, _1>, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                          cutlass::epilogue::TmaWarpSpecializedCooperative, 1>;
using Fp8Square = Config<Shape<_64, _128, _128>, Shape<_2, _1, _1>, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                         cutlass::epilogue::TmaWarpSpecialized, 1>;
using Fp8Narrow = Config<Shape<_64, _128, _128>, Shape<_1, _2, _1>, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                         cutlass::epilogue::TmaWarpSpecialized, 1>;

// kSm90Wide192 — 128×192×128 cooperative, cluster 2×1; precise fp8
// promotes in 2 slices of 96 columns (96 + 2 × 48 registers). Between the
// other two in tile size: where neither 128×256 nor 128×128 tiles fill
// their waves well (precise fp8 384×10240×8192: 75.5 µs against 92.6 and
// 97.4). int8 and fast fp8 run the same tile with one accumulator set (96
// registers), for the same reason (tile_model.h, kSm90Int8Tiles).
using Wide192 = Config<Shape<_128, _192, _128>, Shape<_2, _1, _1>, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                       cutlass::epilogue::TmaWarpSpecializedCooperative>;
using Fp8Wide192 = Config<Shape<_128, _192, _128>, Shape<_2, _1, _1>, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                          cutlass::epilogue::TmaWarpSpecializedCooperative, 2>;

// The one-wave tiles (sm90_one_wave_*.cu: int8, precise fp8, fast fp8) —
// 128×kN×128 cooperative, cluster 1×2, for M = 65–128 where no other tile
// fills one wave (tile_waves.h, wide80_fills_one_wave and
// wide96_fills_one_wave). At 128×10240 the 64-row tiles make 160 (1.2 waves
// on 132 SMs), 128×128 makes 80, 128×192 53; 128×80 makes 128, one wave,
// each CTA streaming 80 weight rows once. 128×96 takes the next band
// (N = 10561–12672), where 128×80 tiles need two waves too. Their MMAs are
// narrow (64×80 per warpgroup: 144 B of shared memory per 64·80 MACs, 1.8×
// Wide's), which M ≤ 128's weight-bound problems can afford. Cluster 1×2:
// N-neighbours share the A tile by multicast (2×1 would give the single M
// tile a padding CTA per tile). Precise fp8 promotes with two whole partial
// sets (3 × kN / 2 registers). The epilogue's subtile is 128 × gcd(32, kN).
// 64×80 is one of CUTLASS's extended wgmma shapes (sm90_one_wave_*.cu
// enable them); 64×96 a standard one.
// kClusterN = 4 (kSm90Wide80x4, kSm90Wide96x4): four N-neighbours share the
// A tile, each loading a quarter of it — H200, 128×80 at M = 72–128 ×
// N = 9216: 0.78–0.95× the time of cluster 1×2 — but only where the
// clusters of four are all co-resident (tile_waves.h, quad_clusters_fit).
// kClusterM = 2, kClusterN = 1 (kSm90Wide80Pairs, kSm90Wide96Pairs): at
// M = 224–256 the two token tiles of a weight tile share it by multicast,
// where 1×2 shares the token tile between two weight tiles. The multicast
// alone would have a CTA ask L2 for 22 KB per k-tile (1×2: 20); measured,
// 13.8 against 20.2 at 128×96 — the token tile, read by the whole wave at
// once, reaches the SMs at ~2 per sector read (tile_waves.h; docs/gemm.md,
// "Why the token pairs ask L2 for less").
template <int kN, int kClusterM = 1, int kClusterN = 2, bool kStaged = true>
using OneWave = Config<Shape<_128, cute::Int<kN>, _128>, Shape<cute::Int<kClusterM>, cute::Int<kClusterN>, _1>,
                       cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                       cutlass::epilogue::TmaWarpSpecializedCooperative, 0, kStaged>;
template <int kN, int kClusterM = 1, int kClusterN = 2, bool kStaged = true>
using Fp8OneWave = Config<Shape<_128, cute::Int<kN>, _128>, Shape<cute::Int<kClusterM>, cute::Int<kClusterN>, _1>,
                          cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                          cutlass::epilogue::TmaWarpSpecializedCooperative, 1, kStaged>;
template <int kN, int kClusterM = 1, int kClusterN = 2, bool kStaged = true>
using Fp8FastOneWave = Config<Shape<_128, cute::Int<kN>, _128>, Shape<cute::Int<kClusterM>, cute::Int<kClusterN>, _1>,
                              cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum,
                              cutlass::epilogue::TmaWarpSpecializedCooperative, 0, kStaged>;

// The thin tile (kSm90Thin48, sm90_cluster4_*.cu: int8, precise fp8, fast
// fp8) — 64×48 ping-pong, cluster 1×4, for M ≤ 64 on weights whose 64×64
// tiles leave most SMs idle (N ≤ 5568 on 132 SMs: dispatch_table.h). At
// N = 4096 it puts 86 CTAs on the weight instead of 64, each streaming 48
// rows instead of 64, and the cluster of four N-neighbours shares the A
// tile by multicast, so each CTA fetches a quarter of it (16 rows per
// k-tile instead of 32). 64×48 is one of CUTLASS's extended wgmma shapes
// (sm90_cluster4_*.cu enable them). Precise fp8 promotes with two whole
// partial sets (kSlices 1). A 64×32 tile (128 CTAs at N = 4096) was
// slower than 64×64 everywhere on the H200 (64×4096×14336 int8 30.6
// against 22.8 µs): its 32 clusters of four are more than the GPU holds at
// once (quad_clusters_fit), so they ran in two waves.
template <int kN>
using Thin = Config<Shape<_64, cute::Int<kN>, _128>, Shape<_1, cute::_4, _1>,
                    cutlass::gemm::KernelTmaWarpSpecializedPingpong, cutlass::epilogue::TmaWarpSpecialized>;
template <int kN>
using Fp8Thin = Config<Shape<_64, cute::Int<kN>, _128>, Shape<_1, cute::_4, _1>,
                       cutlass::gemm::KernelTmaWarpSpecializedPingpong, cutlass::epilogue::TmaWarpSpecialized, 1>;
template <int kN>
using Fp8FastThin = Config<Shape<_64, cute::Int<kN>, _128>, Shape<_1, cute::_4, _1>,
                           cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum,
                           cutlass::epilogue::TmaWarpSpecialized>;

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
// kSm90Wide1x2 → FastWide1x2: the same with cluster 1×2 (= Wide1x2);
// kSm90Square → FastSquare: 128×128×128 ping-pong, cluster 2×1 (= Square);
// kSm90Narrow → FastNarrow: 64×128×128 ping-pong, cluster 1×2 (= Narrow);
// kSm90Small1x2 / kSm90Small2x1 → FastSmall1x2 / FastSmall2x1 (64×64×128);
// kSm90Wide192 → FastWide192: 128×192×128 cooperative, cluster 2×1 (= Wide192).
using Fp8FastWide = Config<Shape<_128, _256, _128>, Shape<_2, _1, _1>,
                           cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum,
                           cutlass::epilogue::TmaWarpSpecializedCooperative>;
using Fp8FastWide192 = Config<Shape<_128, _192, _128>, Shape<_2, _1, _1>,
                              cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum,
                              cutlass::epilogue::TmaWarpSpecializedCooperative>;
using Fp8FastWide1x2 = Config<Shape<_128, _256, _128>, Shape<_1, _2, _1>,
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
