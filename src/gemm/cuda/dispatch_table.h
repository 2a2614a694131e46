// dispatch_table.h — which kernel serves which scaled-GEMM problem, per
// architecture, with the reason next to each choice. Rules are read top to
// bottom; the first whose bounds hold wins. A kernel that cannot take the
// arguments (alignment, strides: see scaled_mm_cuda.cu) hands the problem
// to the next fitting rule and finally to the fallback, so every shape runs.
// Tiles, clusters and schedules of the CUTLASS kernels: sm90_configs.h,
// sm80_configs.h.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "core/dram_bandwidth.h"
#include "gemm/cuda/decode_wgmma_plan.h"
#include "gemm/cuda/kernels.h"

namespace qgemm::detail {

// A rule's condition on how the problem's tiles fill the GPU's SMs.
enum class Waves : uint8_t {
  kAny,
  // 128×128 tiles need more than one wave and less than one and a half
  // (square_tiles_ragged).
  kSquareRagged,
  // 64×64 tiles fit in one wave (small_tiles_fit_one_wave).
  kSmallOneWave,
  // 64×128 tiles do NOT need between one and one and a half waves
  // (narrow_tiles_ragged).
  kNarrowNotRagged,
  // 128×80 tiles fit one wave where 64×128 tiles do not (wide80_fills_one_wave).
  kWide80OneWave,
  // 128×96 tiles fit one wave where 128×80 and 64×128 tiles do not
  // (wide96_fills_one_wave).
  kWide96OneWave,
  // 64×48 tiles in clusters of 1×4 are all co-resident (thin48_fits).
  kThin48Fits,
  // 128×80 tiles in clusters of 1×4 are all co-resident and 64×128 tiles do
  // not fit one wave (wide80x4_fits).
  kWide80x4Fits,
  // 128×96 tiles in clusters of 1×4 are all co-resident where 128×80 ones
  // are not and 64×128 tiles do not fit one wave (wide96x4_fits).
  kWide96x4Fits,
  // The fp8 wgmma decode kernel's 64-row tiles number from nine tenths of
  // the SMs to two per SM (decode_wgmma_fills_the_gpu, decode_wgmma_plan.h).
  kDecodeWgmmaFillsTheGpu,
  // The swapped tiles (64 channels each, in clusters of two) fill at least
  // 70 % of their waves (swapped_tiles_fill).
  kSwappedFills,
};

constexpr int64_t ceil_div(int64_t x, int64_t y) { return (x + y - 1) / y; }
constexpr int64_t round_up(int64_t x, int64_t multiple) { return ceil_div(x, multiple) * multiple; }

constexpr int64_t tile_count(int64_t m, int64_t n, int64_t tile_m, int64_t tile_n) {
  return ceil_div(m, tile_m) * ceil_div(n, tile_n);
}

// True when 128×128 tiles need between one and one and a half waves (e.g.
// 256×10240: 160 tiles on 132 SMs), where a second, mostly idle wave costs
// nearly as much as the first.
constexpr bool square_tiles_ragged(int64_t m, int64_t n, int sm_count) {
  const int64_t tiles = tile_count(m, n, 128, 128);
  return tiles > sm_count && 2 * tiles < 3 * static_cast<int64_t>(sm_count);
}

// True when 64×64 tiles fit in one wave (M ≤ 64: N ≤ 8448 on 132 SMs).
constexpr bool small_tiles_fit_one_wave(int64_t m, int64_t n, int sm_count) {
  return tile_count(m, n, 64, 64) <= sm_count;
}

// True when 64×128 tiles need between one and one and a half waves (e.g.
// 128×10240: 2 × 80 = 160 tiles on 132 SMs).
constexpr bool narrow_tiles_ragged(int64_t m, int64_t n, int sm_count) {
  const int64_t tiles = tile_count(m, n, 64, 128);
  return tiles > sm_count && 2 * tiles < 3 * static_cast<int64_t>(sm_count);
}

// The CTA slots of tile_m × tile_n tiles in clusters of 1 × cluster_n, as the
// persistent scheduler deals them: N tiles in whole clusters, a slot past N
// included (the one-wave and cluster-1×4 tiles).
constexpr int64_t cluster_slots(int64_t m, int64_t n, int64_t tile_m, int64_t tile_n, int64_t cluster_n) {
  return ceil_div(m, tile_m) * round_up(ceil_div(n, tile_n), cluster_n);
}

// True when 128×80 tiles, in clusters of 1×2, fit in one wave and 64×128
// tiles do not: at M = 65–128 on 132 SMs, N = 8449–10560 (N = 10240: 128
// tiles of 128×80 against 160 of 64×128).
constexpr bool wide80_fills_one_wave(int64_t m, int64_t n, int sm_count) {
  return cluster_slots(m, n, 128, 80, 2) <= sm_count && tile_count(m, n, 64, 128) > sm_count;
}

// True when 128×96 tiles fit in one wave and neither 128×80 nor 64×128
// tiles do: at M = 65–128 on 132 SMs, N = 10561–12672 (N = 11008: 115 tiles
// of 128×96 against 138 of 128×80 and 172 of 64×128).
constexpr bool wide96_fills_one_wave(int64_t m, int64_t n, int sm_count) {
  return cluster_slots(m, n, 128, 96, 2) <= sm_count && cluster_slots(m, n, 128, 80, 2) > sm_count &&
         tile_count(m, n, 64, 128) > sm_count;
}

// True when kSm90Swapped's tiles — 64 weight channels each, dealt in
// clusters of two — fill at least 70 % of their waves (its rules: M = 17–32
// and 129–192, N ≥ 6144): on 132 SMs N = 6144
// (96 tiles, 73 %), 8192 (97 %), 14336 and 28672 (85 %), 57344 (97 %), not
// N = 10240 (160 tiles: 61 % of two waves) or 11008 (65 %). H200, M = 136
// / 160 / 176 / 192, against the former pick (bench/results/
// gemm-h200-swapped-sweep-55c126f.json): at 10240×8192 the swapped tiles
// took 0.93–1.19× the former pick's time for int8 and 1.03–1.27× for
// precise fp8 (int8 43.6 against 46.5 µs at M = 136, 46.0 against 38.9 at
// 176), where at the widths that fill they ran 1.02–1.47× faster. At
// M = 17–32 (gemm-h200-swapped-sweep-m17-64.json) the same split: 0.99–1.16×
// the former pick's time at 10240×8192, 0.81–1.01× where the tiles fill.
constexpr bool swapped_tiles_fill(int64_t n, int sm_count) {
  if (sm_count <= 0) return false;
  const int64_t tiles = round_up(ceil_div(n, 64), 2);
  const int64_t waves = ceil_div(tiles, sm_count);
  return tiles * 10 >= waves * sm_count * 7;
}

// True where Hopper runs kSm90SwappedStreamK when the call brings a
// workspace: the 128×160 (M ≤ 160) or 128×192 swapped tiles, cut along K by
// the stream-K scheduler, keep every SM busy with no 128-row tile mostly
// padding. H200 data: bench/results/gemm-h200-swapped-stream-k-sweep.json
// and gemm-h200-swapped-stream-k-n4096.json (forced, one call each); µs or
// time ratios, int8 / precise fp8.
//   - N ≥ 6144, M = 129–160, where kSm90Swapped's tiles do not fill their
//     waves (N = 10240 and 11008 on 132 SMs): against the tile model's
//     128×192, 136×10240×8192 46.5 → 36.8 / 45.8 → 38.0, 160×… 42.0 →
//     35.6 / 41.9 → 35.3, 136×11008×4096 28.9 → 22.6 / 28.4 → 22.3,
//     160×… 26.4 → 22.2 / 25.2 → 22.1. Even at M = 176–192 (1.00–1.02×
//     faster); where the 64-channel tiles fill, 1.2–1.4× slower at N = 6144
//     and 8192 (0.96–1.03× at 28672).
//   - N = 4096–6143, by the 128×128 k-tiles each SM gets, ⌈N/128⌉·⌈K/128⌉ /
//     SMs, against the whole swapped tiles (the rule there at M ≤ 160):
//     15.5 per SM (N = 4096, K = 8192) 1.12–1.17× / 1.17–1.19× their time,
//     20.8 (K = 11008) 1.03–1.07× / 1.09–1.12×, 27.2 (14336) 0.93–0.97× /
//     0.98–1.01×, 54.3 (28672) 0.74–0.79× / 0.77–0.81×; at K = 4096 (7.8)
//     1.3–1.6× the 64×128 tiles' time. At M = 161–192, against the 64×128
//     tiles: 176×4096×14336 (27.2) 1.01× / 1.06×, 192×4096×28672 (54.3)
//     0.78× / 0.83×. So from 24 k-tiles per SM at M ≤ 160, from 48 above.
//     Not at N < 4096: at 160×2048×16384 precise fp8's in-order fix-up of
//     ~8 peers per tile ran 1.21× the 64×128 tiles' time.
constexpr int64_t kSwappedStreamKTilesPerSm = 24;
constexpr bool swapped_stream_k_takes(int64_t m, int64_t n, int64_t k, int sm_count) {
  if (m <= 128 || m > 192 || sm_count <= 0) return false;
  if (n >= 6144) return m <= 160 && !swapped_tiles_fill(n, sm_count);
  const int64_t k_tiles = ceil_div(n, 128) * ceil_div(k, 128);
  const int64_t per_sm = m <= 160 ? kSwappedStreamKTilesPerSm : 2 * kSwappedStreamKTilesPerSm;
  return n >= 4096 && k_tiles >= per_sm * sm_count;
}

// Clusters of four CTAs (kSm90Thin48, kSm90Wide80x4, kSm90Wide96x4) run one
// wave only where all of them are co-resident, and fewer fit than SMs / 4:
// a cluster runs on the SMs of one GPC, and Hopper's SMs come in pairs
// (TPCs), so a GPC whose SM count is 2 mod 4 leaves a pair idle — with
// GH100's 8 GPCs at most 16 SMs, 116 of an H100's or H200's 132. The rules
// hold to that bound. On the H200, 29 clusters of four (116 CTAs) ran in one wave and 32
// (128) in two: 128×10240×8192 int8 30.0 µs with 128×80 tiles in pairs,
// 40.4 in fours, 128×9216×8192 (29 clusters) 28.7 and 27.1
// (bench/results/gemm-h200-sweep-wide80x4-5897ca2.json).
constexpr int64_t kQuadClusterIdleSms = 16;
constexpr bool quad_clusters_fit(int64_t slots, int sm_count) {
  return slots <= static_cast<int64_t>(sm_count) - kQuadClusterIdleSms;
}

// True when 64×48 tiles in clusters of 1×4 are all co-resident: M ≤ 64 on
// 132 SMs, N ≤ 5568 (N = 4096: 88 slots).
constexpr bool thin48_fits(int64_t m, int64_t n, int sm_count) {
  return quad_clusters_fit(cluster_slots(m, n, 64, 48, 4), sm_count);
}

// True when 128×80 tiles in clusters of 1×4 are all co-resident and 64×128
// tiles do not fit one wave: M = 65–128 on 132 SMs, N = 8449–9280 (N =
// 9216: 116 slots), inside wide80_fills_one_wave's band.
constexpr bool wide80x4_fits(int64_t m, int64_t n, int sm_count) {
  return quad_clusters_fit(cluster_slots(m, n, 128, 80, 4), sm_count) && tile_count(m, n, 64, 128) > sm_count;
}

// True when 128×96 tiles in clusters of 1×4 are all co-resident, 128×80
// ones are not, and 64×128 tiles do not fit one wave: M = 65–128 on 132
// SMs, N = 9281–11136 (N = 10240: 108 slots, 11008: 116).
constexpr bool wide96x4_fits(int64_t m, int64_t n, int sm_count) {
  return quad_clusters_fit(cluster_slots(m, n, 128, 96, 4), sm_count) &&
         !quad_clusters_fit(cluster_slots(m, n, 128, 80, 4), sm_count) && tile_count(m, n, 64, 128) > sm_count;
}

// Above M = 256 on Hopper: which tile fills the SMs best for its speed.
// The persistent scheduler deals output tiles round-robin to one CTA per SM,
// in whole clusters, so an M×N problem takes
//   waves = ceil(round_up(ceil(M / tile_m), cluster_m) ·
//                round_up(ceil(N / tile_n), cluster_n) / SMs)
// tile times, and a tile's time is its area × its time per MAC (K is the
// same for every candidate, so it drops out). A cluster slot past the
// problem still occupies an SM: with cluster 2×1, 384×10240 (3 × 40 tiles of
// 128×256) runs as 4 × 40 = 160, two waves on 132 SMs; with 1×2, one. A
// ping-pong CTA's two warpgroups take alternate tiles, one at a time on the
// tensor cores, so they count as one tile at a time here too.
//
// The time per MAC, relative to the 128×256 cooperative tile (× 1000), is the
// median over 240 shapes (M = 320 … 4096 in steps of 64–256, the eight
// (N, K)) of time / (waves × area) on the H100 (`scripts/device_sweep_tiles.sh`,
// bench/results/gemm-h100-sweep-tiles.json). The 128×128 tiles — ping-pong
// and precise fp8's cooperative alike — are slower where M is not a multiple
// of 128, in proportion to the rows past M in the last cluster's M tiles
// (int8 ping-pong at N = 4096, K = 14336, one wave, µs: M = 512 43.1, 504
// 43.3, 480 52.6, 448 60.2, 416 65.3, 392 69.3; bench/results/
// gemm-h100-pingpong-ragged-m.json; precise fp8 128×128 at N = 4096,
// K = 14336: M = 768 82.6, 704 96.6, 640 106.0 — whose sixth M tile is all
// padding — 576 109.2). The 128×192 and 128×256 tiles are not (73.4–74.2 µs
// at every M above). ncu shows the SMs idle for part of the kernel, the last
// M row's CTAs finishing late; why is not understood. So those tiles' cost
// grows by `cost_ragged_m` × the rows past M (at most one tile's) / 128,
// fitted on both sets. The model's pick then cost 1.0 % against the fastest
// candidate for int8 (geomean; the former rules 6.9 %), 0.6 % for precise
// fp8 (the former model over the 2×1 tiles 1.5 %) and 1.0 % for fp8 with
// fast accumulation (3.5 %); at the grid's M = 512 … 4096 1.8 / 0.5 / 2.6 %
// (the former rules 1.3 / 0.9 / 1.2 %); on the 20 ragged shapes above 0.1 %
// (a flat ragged cost: 3.2 %, at most 1.28×). The 64×128
// ping-pong tiles measured 1.55× (int8) and 1.50× (fp8) the time per MAC and
// would be picked at none of the 240 shapes: they are not candidates.
struct TileCandidate {
  GemmKernel kernel;
  int64_t tile_m, tile_n, cluster_m, cluster_n;
  int64_t cost;           // time per MAC, 128×256 cooperative = 1000, plus …
  int64_t cost_ragged_m;  // … this × the rows past M (at most a tile's) / tile_m
  // The time per MAC instead of `cost` on a GPU with fast DRAM (DramRegime
  // below); 0: `cost` there too.
  int64_t cost_fast_dram = 0;
  // … and instead of that where K is also short; 0: as at longer K.
  int64_t cost_short_k_fast_dram = 0;
  // Whether stream-K (with a workspace) is weighed against this tile:
  // rule_takes_stream_k compares it with the fastest candidate that is.
  bool stream_k_rival = true;
};

// Fast DRAM: more than 30 GB/s of peak bandwidth per SM (dram_fast_per_sm
// of the runtime's figure, cuda_peak_dram_gbps: H100 SXM 3352 GB/s = 25 per
// SM, H200 4814 = 36). The costs above were fitted on the H100; where the
// H200's differs and an interleaved A/B there confirmed the picks it
// changes, the candidate carries it as `cost_fast_dram`. K ≤ kShortK on
// such a GPU:
// there the 128×128 ping-pong tile beat 128×256 cooperative, in one call
// with the two interleaved (H200, --rounds 2–3, bench/results/
// gemm-h200-square-k4096.json and gemm-h200-wide-square-ab.json): int8
// 0.93–0.97× its time at K = 4096 and M a multiple of 128 (8192×4096×4096
// 181.1 → 170.4 µs, 768×28672×4096 145.4 → 125.6, 2048×28672×4096 318.2 →
// 302.6), 0.88–0.95× at K = 2048, fast fp8 0.96–0.99×; but 1.07–1.09× at
// K ≥ 8192 (8192³ 711.6 → 777.1). Ping-pong hides one warpgroup's epilogue
// under the other's mainloop, which weighs more the shorter K is; on the
// H100 the 128×128 tile cost 1.11–1.16× per MAC at K = 4096 as at 8192
// (gemm-h100-sweep-tiles.json), so the H100 keeps `cost`. Between the two
// (H200, gemm-h200-pingpong-long-k-ab-276b39e.json, where a cost of 1050 at
// K > 4096 would change the pick), int8: 0.87–1.04× 128×256's time at
// K = 8192–14336, 0.93–1.11× at K = 28672 — no one cost for K > 4096, so
// it keeps `cost` there.
constexpr int64_t kShortK = 4096;

// Which of a candidate's times per MAC a call is modelled with (tile_cost).
enum class DramRegime : uint8_t {
  kDefault,     // the H100's DRAM (or an unknown bandwidth): `cost`
  kFast,        // more than 30 GB/s of peak DRAM per SM: `cost_fast_dram`
  kFastShortK,  // that, and K ≤ kShortK: `cost_short_k_fast_dram`
};
constexpr DramRegime dram_regime(int64_t k, int64_t dram_gbps, int sm_count) {
  if (!dram_fast_per_sm(dram_gbps, sm_count)) return DramRegime::kDefault;
  return k <= kShortK ? DramRegime::kFastShortK : DramRegime::kFast;
}
constexpr int64_t tile_cost(const TileCandidate& c, DramRegime regime) {
  if (regime == DramRegime::kFastShortK && c.cost_short_k_fast_dram > 0) return c.cost_short_k_fast_dram;
  if (regime != DramRegime::kDefault && c.cost_fast_dram > 0) return c.cost_fast_dram;
  return c.cost;
}

// int8, and fp8 with fast accumulation (its kernels are int8's tiles). Where
// the model's pick gained most over the former rules (H100, one call, µs,
// gemm-h100-sweep-tiles.json and gemm-h100-sweep-tiles-m129-256.json):
//   128×256, 2×1: 448×8192×8192 67.1 → 48.0, 448×57344×8192 461.5 → 326.1,
//                 144×57344×8192 280.3 → 214.3, 136×28672×4096 73.0 → 61.1
//   128×256, 1×2 (odd M-tile counts): 384×10240×8192 95.5 → 54.3,
//                 640×57344×8192 716.9 → 429.6, 1152×10240×8192 177.0 → 139.7
//   128×128 ping-pong: 768×8192×28672 288.0 → 243.3, 1280×4096×14336
//                 169.3 → 134.5, 1280×4096×4096 49.7 → 41.9
constexpr TileCandidate kSm90Int8Tiles[] = {
    {GemmKernel::kSm90Wide, 128, 256, 2, 1, 1000, 0},
    {GemmKernel::kSm90Wide1x2, 128, 256, 1, 2, 1020, 0},
    // ping-pong; 950 where K is short on fast DRAM (DramRegime::kFastShortK:
    // the measured 0.93–0.97 for int8, 0.96–0.99 for fast fp8)
    {GemmKernel::kSm90Square, 128, 128, 2, 1, 1125, 560, 0, 950},
    // 128×192 (since 07bdea6; precise fp8 had it before): 1050, the median
    // of its time per MAC against 128×256's over 46 shapes on the H200
    // (int8 1038, fast fp8 1056; M = 136–2176, bench/results/
    // gemm-h200-sweep-wide192-07bdea6.json), as precise fp8's 128×192 costs
    // on both GPUs (1050 on the H100, 1034–1041 on the H200); its rows past
    // M cost 30, the value that keeps the 128×256 tile at 136×57344×8192
    // (201.5 against 231.1 µs) and 128×192 at 136×8192×8192 (39.1 against
    // 43.9 for 128×128). Over those shapes the model's whole-tile pick took
    // 1.014× the fastest candidate's time for int8 (1.091× without the
    // tile), 1.011× for fast fp8 (1.081×). With a workspace, against the
    // former picks at 9 shapes it takes, 0.845× the time: 704×8192×8192
    // 89.4 → 69.8 µs, 192×10240×8192 47.0 → 38.2; at most 1.018×
    // (512×10240×8192 68.1 → 69.3; gemm-h200-wide192-ab-c5830a6.json,
    // docs/gemm.md "int8's 128×192 tile").
    // The row term also holds at 136–176×57344 for every input (H200,
    // gemm-h200-wide192-rowterm-579a116.json). Above M = 256 it errs toward
    // the picks from before this tile (3073×4096×4096: 128×256 96.5 µs
    // where 128×192 took 91.7 and stream-K 89.3).
    // Not a stream-K rival: stream-K keeps the shapes it took before this
    // tile. At the 18 such shapes where the H200 timed both, stream-K was
    // faster at 14 (593×8192×14336 113.1 against 135.2 µs, 1281×4096×28672
    // 214.0 against 262.5, 1152×4096×14336 94.7 against 115.7), 128×192 at
    // 704×8192×28672 (214.6 against 229.0) and three more by ≤ 2 %
    // (gemm-h200-wide192-streamk-c5830a6.json,
    // gemm-h200-wide192-rowterm-579a116.json,
    // gemm-h200-streamk-fixup-20-ea20a3a.json).
    {GemmKernel::kSm90Wide192, 128, 192, 2, 1, 1050, 30, 0, 0, /*stream_k_rival=*/false},
};
// Precise fp8 (each promoting under the next wgmma: sm90_configs.h). Before
// the model, the same formula over the three cluster-2×1 tiles above M = 256
// and 128×128 at M = 129–256. Gains, as above:
//   128×256, 2×1 (4 slices): 8192³ 850 against 907 (128×192) and 977
//                 (128×128); 896×10240×8192 163.8 → 140.7, 1088×8192×8192
//                 162.7 → 137.9, 160×28672×4096 79.7 → 60.1
//   128×256, 1×2: 384×10240×8192 75.4 → 54.3, 1152×10240×8192 186.4 → 145.6,
//                 640×6144×4096 42.1 → 30.0
//   128×192 (2 slices): 768×4096×14336 65.2 against 76.6 (128×256) and 82.4
//                 (128×128); 136×57344×8192 302.1 → 239.8
//   128×128 cooperative (three whole partial sets): 512×4096×4096 18.1
//                 against 27.7 (128×256) and 22.8 (128×192)
// On fast DRAM the 128×128 cooperative tile costs 1100, not 1250: the
// median of its time per MAC over 176 shapes (M = 320 … 8192, the issue's
// eight (N, K); bench/results/gemm-h200-sweep-tiles-844a3ae.json) was
// 1082–1107 at every K (the other precise tiles' within 2 % of theirs).
// Where that changes the pick (with a workspace, 10 shapes of M = 320 …
// 4096 in steps of 64 × those (N, K)), timed interleaved against the former
// pick (gemm-h200-fp8-coop128-276b39e.json): 0.973× the time over the 9 timed, 1024×10240×8192 138.1 →
// 124.8 µs, 1280×8192×8192 138.0 → 128.5, 2560×4096×4096 74.9 → 70.5; at
// most 1.02× (3328×4096×4096 94.4 → 96.4).
constexpr TileCandidate kSm90Fp8Tiles[] = {
    {GemmKernel::kSm90Wide, 128, 256, 2, 1, 1000, 0},
    {GemmKernel::kSm90Wide1x2, 128, 256, 1, 2, 1030, 0},
    // 30 per row past M, as int8's 128×192 (kSm90Int8Tiles): at M = 129–192
    // on the H100 the model then keeps 128×256 at 136–160×57344 (µs 128×256 /
    // 128×192: M = 136 217.3 / 239.8, 144 213.5 / 234.4, 160 211.4 / 225.7;
    // gemm-h100-sweep-tiles-m129-256.json; H200 136×57344×8192 201.5 / 230.5)
    // and takes 128×192 from 176 on, where it measured as fast or faster;
    // its pick there costs 1.0095× the fastest candidate (geomean of 30
    // shapes; 1.018× without the term). Above M = 256 the term moves no
    // measured pick by more than noise (240 H100 shapes 1.0056 → 1.0053×,
    // 176 H200 shapes 1.0068 → 1.0071×).
    {GemmKernel::kSm90Wide192, 128, 192, 2, 1, 1050, 30},
    {GemmKernel::kSm90Coop128, 128, 128, 2, 1, 1250, 600, 1100},
};

// The tile counts along M and N as CUTLASS's schedulers deal them: in
// whole clusters, a slot past the problem included.
struct ClusterTiles {
  int64_t m, n;
};
constexpr ClusterTiles cluster_tiles(const TileCandidate& c, int64_t m, int64_t n) {
  return {round_up(ceil_div(m, c.tile_m), c.cluster_m), round_up(ceil_div(n, c.tile_n), c.cluster_n)};
}

constexpr int64_t modelled_time(const TileCandidate& c, int64_t m, int64_t n, int sm_count,
                                DramRegime regime = DramRegime::kDefault) {
  const int64_t cost = tile_cost(c, regime);
  const auto [m_tiles, n_tiles] = cluster_tiles(c, m, n);
  const int64_t sms = sm_count > 0 ? sm_count : 1;  // (no SM count: one SM)
  const int64_t waves = (m_tiles * n_tiles + sms - 1) / sms;
  // Rows past M in the last cluster's M tiles (the cluster's padding tile
  // included), at most one tile's.
  const int64_t empty_rows = std::min(c.tile_m, m_tiles * c.tile_m - m);
  return waves * c.tile_n * (c.tile_m * cost + empty_rows * c.cost_ragged_m);
}

// Stream-K (kSm90StreamK, sm90_stream_k.cuh), a candidate only where the
// call brings a workspace (scaled_mm_workspace_bytes). CUTLASS's stream-K
// scheduler keeps whole tiles but for the last two waves (the last full one
// and the partial one), whose tiles it cuts along K into equal shares of at
// least 8 k-tiles (128 elements each) for the CTAs of one wave (`units`: one
// per SM in whole clusters, fewer where the shares would drop below 8). A
// CTA computes
//   dp_waves · k_tiles + ceil(sk_tiles · k_tiles / units)
// k-tiles instead of waves · k_tiles, and the split tiles cost their partial
// sums' trip through the workspace (store, the peers' adds, the last peer's
// load): `fixup_k_tiles` more per tile a CTA's share touches, at least one
// (split_tiles / units of them on average), fitted on the H100 sweeps below.
// Without a ragged wave (tiles a multiple of units) or with 8 k-tiles or
// fewer, it runs whole tiles.
struct StreamKCandidate {
  TileCandidate tile;     // its kernel, tile, cluster and time per MAC
  int64_t fixup_k_tiles;  // the split tiles' reduction, in k-tiles of this tile
};
// The fixup, 35 k-tiles (≈ 25 µs at K = 8192 for int8), is the value that
// made the model's picks fastest over 414 (M, N, K, dtype) cases with the
// tile model (M = 136 … 4096 × the eight (N, K); every candidate and
// stream-K forced, bench/results/gemm-h100-sweep-stream-k.json): against the
// model's whole-tile pick, geomean 1.019× (int8), 1.012× (precise fp8),
// 1.020× (fast fp8) — the fastest of the two everywhere would give 1.023×,
// 1.016×, 1.025× — never slower than 0.94× (192×8192×28672, where the
// model's whole tile is 128×256 and measured 5 % faster) and up to 1.48×
// faster (int8 1152×4096×14336 153.1 → 103.5 µs); a flat fixup of 35 had
// the same geomean but lost up to 0.87× where the shares span 1.7 tiles
// (896×8192×28672). The median fixup measured against the same tile's
// whole-tile run is 22–25 k-tiles, spread 18–42 (quartiles).
constexpr StreamKCandidate kSm90Int8StreamK{{GemmKernel::kSm90StreamK, 128, 256, 1, 2, 1020, 0}, 35};
constexpr StreamKCandidate kSm90Fp8StreamK{{GemmKernel::kSm90StreamK, 128, 256, 1, 2, 1030, 0}, 35};

// Stream-K's modelled time of an M×N×K problem in modelled_time's units ×
// k-tiles (K enters: the fixup is a fixed cost, the k loop is not).
constexpr int64_t stream_k_time(const StreamKCandidate& sk, int64_t m, int64_t n, int64_t k, int sm_count) {
  const TileCandidate& c = sk.tile;
  const int64_t sms = sm_count > 0 ? sm_count : 1;
  const int64_t cluster = c.cluster_m * c.cluster_n;
  const int64_t wave = std::max<int64_t>(sms / cluster * cluster, cluster);  // CTAs of a wave
  const auto [m_tiles, n_tiles] = cluster_tiles(c, m, n);
  const int64_t tiles = m_tiles * n_tiles;
  const int64_t k_tiles = ceil_div(k, 128);
  const int64_t full_waves = tiles / wave;
  int64_t per_cta = ceil_div(tiles, wave) * k_tiles, fixup = 0;
  if (tiles % wave != 0 && k_tiles > 8) {
    const int64_t dp_waves = full_waves > 1 ? full_waves - 1 : 0;
    const int64_t split_tiles = tiles - dp_waves * wave;
    const int64_t units = std::min(wave, split_tiles * k_tiles / 8 / cluster * cluster);
    if (units > 0) {
      per_cta = dp_waves * k_tiles + ceil_div(split_tiles * k_tiles, units);
      fixup = std::max(sk.fixup_k_tiles, ceil_div(sk.fixup_k_tiles * split_tiles, units));
    }
  }
  return c.tile_m * c.tile_n * c.cost * (per_cta + fixup);
}

// M ≤ 16 with a workspace: where the swapped wgmma decode kernel
// (kSm90Decode, sm90_decode.cuh) replaces kSm90SkinnyStream. Measured on the
// H200 (both forced in one call, M ∈ {1, 8, 9, 16} and four more tall
// weights; bench/results/gemm-h200-decode-swapped-ab.json, …-modes.json),
// its time is ~11 µs plus the weight at ~4.45 TB/s, the skinny kernel's
// ~6 µs plus ~4.15 TB/s (fp8; int8 at M ≤ 8 on tall weights less): it wins
// only on large weights, and only where its 128-row tiles are at least one
// and a half waves (at 8192×28672, 64 tiles, the scheduler cuts every tile
// and the two kernels tie). Both hold from (N, K) = (28672, 8192) up:
// 1×28672×8192 int8 68.1 → 61.6 µs, 16×… fp8 69.7 → 63.5, 1×57344×8192
// int8 128.4 → 117.3, 16×128256×8192 fp8 280.4 → 253.7; at 28672×4096
// (117 MB) it was 1.10× slower, at 8192×8192 1.2×.
constexpr int64_t kDecodeMinWeightElements = int64_t{200} << 20;
constexpr bool decode_takes(int64_t m, int64_t n, int64_t k, int sm_count) {
  return m <= 16 && sm_count > 0 && 2 * ceil_div(n, 128) >= 3 * static_cast<int64_t>(sm_count) &&
         n * k >= kDecodeMinWeightElements;
}

// A tile model: candidates to pick from, the cheaper per MAC first, and the
// stream-K candidate where the call brings a workspace.
struct TileModel {
  const TileCandidate* candidates = nullptr;
  size_t count = 0;
  const StreamKCandidate* stream_k = nullptr;
};
constexpr TileModel kSm90Int8Model{kSm90Int8Tiles, sizeof(kSm90Int8Tiles) / sizeof(kSm90Int8Tiles[0]),
                                   &kSm90Int8StreamK};
constexpr TileModel kSm90Fp8Model{kSm90Fp8Tiles, sizeof(kSm90Fp8Tiles) / sizeof(kSm90Fp8Tiles[0]), &kSm90Fp8StreamK};

// The whole-tile candidate with the shortest modelled time (the first of
// equals), each at its cost for the call's DramRegime; `stream_k_rivals`:
// among those stream-K is weighed against only (the first candidate is one).
constexpr const TileCandidate& fastest_tile(const TileModel& model, int64_t m, int64_t n, int sm_count,
                                            DramRegime regime = DramRegime::kDefault, bool stream_k_rivals = false) {
  const TileCandidate* best = &model.candidates[0];
  for (size_t i = 1; i < model.count; ++i) {
    const TileCandidate& c = model.candidates[i];
    if (stream_k_rivals && !c.stream_k_rival) continue;
    if (modelled_time(c, m, n, sm_count, regime) < modelled_time(*best, m, n, sm_count, regime)) {
      best = &c;
    }
  }
  return *best;
}
constexpr GemmKernel modelled_tile(const TileModel& model, int64_t m, int64_t n, int sm_count,
                                   DramRegime regime = DramRegime::kDefault) {
  return fastest_tile(model, m, n, sm_count, regime).kernel;
}

struct GemmRule {
  int64_t max_m;  // the rule applies when M ≤ max_m …
  int64_t min_n;  // … and min_n ≤ N ≤ max_n …
  int64_t max_n;
  GemmKernel kernel;  // … and runs this kernel, or, given a tile model and
                      // an SM count, the model's pick
  const char* why;
  Waves waves = Waves::kAny;  // … and the tiles fill the SMs as this says …
  TileModel model = {};
  bool needs_fast_dram = false;  // … and, if set (kFastDramOnly), the GPU's DRAM is fast
                                 // (DramRegime not kDefault).
};
constexpr bool kFastDramOnly = true;

constexpr bool waves_hold(Waves waves, int64_t m, int64_t n, int sm_count) {
  switch (waves) {
    case Waves::kAny: return true;
    case Waves::kSquareRagged: return square_tiles_ragged(m, n, sm_count);
    case Waves::kSmallOneWave: return small_tiles_fit_one_wave(m, n, sm_count);
    case Waves::kNarrowNotRagged: return !narrow_tiles_ragged(m, n, sm_count);
    case Waves::kWide80OneWave: return wide80_fills_one_wave(m, n, sm_count);
    case Waves::kWide96OneWave: return wide96_fills_one_wave(m, n, sm_count);
    case Waves::kThin48Fits: return thin48_fits(m, n, sm_count);
    case Waves::kWide80x4Fits: return wide80x4_fits(m, n, sm_count);
    case Waves::kWide96x4Fits: return wide96x4_fits(m, n, sm_count);
    case Waves::kDecodeWgmmaFillsTheGpu: return decode_wgmma_fills_the_gpu(n, sm_count);
    case Waves::kSwappedFills: return swapped_tiles_fill(n, sm_count);
  }
  return false;
}

// The first rule of `rules` that holds for an M×N problem on `sm_count`
// SMs with the call's DramRegime, or nullptr (then the fallback runs).
template <size_t N>
constexpr const GemmRule* pick_rule(const GemmRule (&rules)[N], int64_t m, int64_t n, int sm_count,
                                    DramRegime regime = DramRegime::kDefault) {
  for (const GemmRule& rule : rules) {
    if (m <= rule.max_m && n >= rule.min_n && n <= rule.max_n && waves_hold(rule.waves, m, n, sm_count) &&
        (!rule.needs_fast_dram || regime != DramRegime::kDefault)) {
      return &rule;
    }
  }
  return nullptr;
}

// The kernel `rule` runs for an M×N problem on `sm_count` SMs: its tile
// model's pick where it has one (and an SM count), else its kernel.
constexpr GemmKernel rule_kernel(const GemmRule& rule, int64_t m, int64_t n, int sm_count,
                                 DramRegime regime = DramRegime::kDefault) {
  return rule.model.count > 0 && sm_count > 0 ? modelled_tile(rule.model, m, n, sm_count, regime)
                                              : rule.kernel;
}

// With a workspace: whether `rule`'s tile model takes stream-K for an
// M×N×K problem — its modelled time shorter than that of the best
// whole-tile candidate it is weighed against (TileCandidate::stream_k_rival).
constexpr bool rule_takes_stream_k(const GemmRule& rule, int64_t m, int64_t n, int64_t k, int sm_count,
                                   DramRegime regime = DramRegime::kDefault) {
  const TileModel& model = rule.model;
  if (model.count == 0 || model.stream_k == nullptr || sm_count <= 0) return false;
  const TileCandidate& best = fastest_tile(model, m, n, sm_count, regime, /*stream_k_rivals=*/true);
  const int64_t whole_tiles = modelled_time(best, m, n, sm_count, regime) * ceil_div(k, 128);
  return stream_k_time(*model.stream_k, m, n, k, sm_count) < whole_tiles;
}

constexpr int64_t kAnyM = std::numeric_limits<int64_t>::max();
constexpr int64_t kAnyN = std::numeric_limits<int64_t>::max();

// Hopper (sm_90a). Chosen from `qgemm bench gemm --sweep` on an H100 SXM
// (bench/results/gemm-h100-sweep.json: every config timed on every shape;
// M ≤ 256 on the smaller weights: bench/results/gemm-h100-sweep-small-m.json).
// The µs below are H100 medians from one call, before → after.
constexpr GemmRule kSm90Int8Rules[] = {
    {16, 0, kAnyN, GemmKernel::kSm90SkinnyStream,
     "M ≤ 16 (decode): 16-column tiles on one or two persistent CTAs per SM (by the rate one CTA "
     "streams against the DRAM's share per SM: skinny_stream_ctas_per_sm; two on an H200), the weight "
     "streamed into shared memory by bulk copies (4 stages of 16 KB in flight per CTA). Against the "
     "register-ring skinny "
     "kernel (same call, bench/results/gemm-h100-skinny-stream-ab.json): M ≤ 8 0.91× the time "
     "(geomean of int8 and fp8 over the 8 (N, K), never slower), M = 9–16 0.90× (at most 2 % slower: "
     "16×8192×28672 int8); 1×4096×14336 29.7 → 24.9 µs, 16×57344×8192 175.9 → 165.7. It also beat "
     "the 64×64 CUTLASS tile that fp8 M = 9–16 ran at N = 8192 (16×8192×8192 fp8 32.1 → 29.9 µs)"},
    {64, 0, kAnyN, GemmKernel::kSm90Thin48,
     "M ≤ 64 where 64×48 tiles in clusters of 1×4 are all co-resident (N ≤ 5568 on 132 SMs): more "
     "CTAs than 64×64 pull the weight, and four share each A tile — H200: 24×4096×14336 27.6 → "
     "24.3 µs, 32×4096×11008 22.7 → 19.7, 64×4096×14336 22.7 → 22.0, 32×5120×8192 20.5 → 19.1 "
     "(bench/results/gemm-h200-sweep-thin-5897ca2.json)",
     Waves::kThin48Fits},
    {32, 6144, kAnyN, GemmKernel::kSm90Swapped,
     "M = 17–32, N ≥ 6144 where its tiles fill their waves: Dᵀ = B·Aᵀ on 64 channels × 32 tokens, "
     "where the 64-row tiles pad 32–47 rows — H200: 24×8192×28672 74.3 → 60.4 µs, 24×8192×8192 "
     "26.2 → 22.6, 32×57344×8192 128.5 → 116.9, 24×6144×4096 14.9 → 13.4 "
     "(bench/results/gemm-h200-swapped-sweep-m17-64.json); at M = 33–64 a 64×64 swapped tile "
     "was 0.91–1.02× as fast where its tiles fill, and was not kept",
     Waves::kSwappedFills},
    {64, 0, kAnyN, GemmKernel::kSm90Small1x2,
     "M ≤ 64 where 64×64 tiles fit one wave: twice the CTAs of 64×128 pull the weight — "
     "64×4096×14336 32.9 → 28.6 µs, 64×4096×4096 14.3 → 13.3, 32×8192×8192 34.6 → 32.1; with more "
     "than one wave 64×128 stayed faster (32×10240×8192 39.4 vs 42.3, 32×28672×4096 49.8 vs 52.5)",
     Waves::kSmallOneWave},
    {64, 0, kAnyN, GemmKernel::kSm90Narrow,
     "bandwidth-bound: 64×128 tiles (the smallest wgmma M) waste the least MMA work; TMA keeps enough "
     "bytes in flight"},
    {128, 0, kAnyN, GemmKernel::kSm90Wide80x4,
     "M = 65–128 where 128×80 tiles in clusters of 1×4 are all co-resident and 64×128 tiles need "
     "more than one wave (N = 8449–9280 on 132 SMs): four CTAs share each A tile — H200: "
     "72×9216×8192 36.1 → 28.2 µs, 96×9216×4096 19.8 → 18.5, 128×9216×8192 28.7 → 27.1 "
     "(bench/results/gemm-h200-sweep-wide80x4-5897ca2.json)",
     Waves::kWide80x4Fits},
    {128, 0, kAnyN, GemmKernel::kSm90Wide96x4,
     "M = 65–128 where 128×96 tiles in clusters of 1×4 are all co-resident and 128×80 ones are not, "
     "64×128 tiles needing more than one wave (N = 9281–11136 on 132 SMs): the next band, as above — "
     "H200, against 128×80 (N ≤ 10560) or 128×96 in pairs: 72×9472×8192 36.8 → 29.1 µs, "
     "72×10240×8192 37.3 → 29.9, 100×11008×8192 33.3 → 30.7, 128×10240×8192 29.9 → 29.5 "
     "(bench/results/gemm-h200-wide96x4-ab-60cfa61.json). It leaves 128×80 in pairs no band on "
     "GPUs of 96 SMs or more",
     Waves::kWide96x4Fits},
    {128, 0, kAnyN, GemmKernel::kSm90Wide80,
     "M = 65–128 where 128×80 tiles fill one wave and 64×128 tiles need more (N = 8449–10560 on 132 "
     "SMs): one wave of 128-row tiles streaming 80 weight rows each — H200: 128×10240×8192 33.7 → "
     "29.7 µs, 112×9216×8192 33.9 → 29.5, 80×10240×8192 37.8 → 35.8 (fast fp8 128×10240×8192 "
     "33.8 → 29.4; bench/results/gemm-h200-sweep-wide80-5a87830.json)",
     Waves::kWide80OneWave},
    {128, 0, kAnyN, GemmKernel::kSm90Wide96,
     "M = 65–128 where 128×96 tiles fill one wave and 128×80 and 64×128 tiles need more (N = "
     "10561–12672 on 132 SMs) — H200: 100×12288×4096 25.6 → 22.1 µs, 80×12288×8192 39.2 → 37.4, "
     "128×11008×4096 20.8 → 20.5 (fast fp8 100×12288×4096 25.5 → 21.9; "
     "bench/results/gemm-h200-sweep-wide96-2d53da0.json)",
     Waves::kWide96OneWave},
    // Fast DRAM (an H200), M = 65–128: the 64-row ping-pong tiles there ran
    // the slower the more rows past M their second M tile holds (as the
    // 128×128 tile does above M = 256: kSm90Int8Tiles) — int8 57344×8192 with
    // 64×64 tiles: M = 100 174.2 µs, 112 157.7, 120 147.1, 128 144.0; with
    // 64×128: 80 143.0, 128 126.3. The three rules below were read off a sweep
    // of every tile at M = 24–256 × the eight (N, K)
    // (bench/results/gemm-h200-sweep-small-m-02668d8.json) and confirmed
    // interleaved (--rounds 3 --cooldown 100, gemm-h200-small-m-ab-02668d8.json;
    // N < 6144 at M = 66–88: gemm-h200-small-m-n4096-ab-2129c91.json). On the
    // H100 the same tiles were within ±4 % at these shapes (64×64 5–7 %
    // faster at N = 10240: gemm-h100-sweep-narrow2x1.json), so it keeps the
    // rules after them.
    {96, 28672, kAnyN, GemmKernel::kSm90Wide1x2,
     "fast DRAM, M = 65–96, N ≥ 28672: one 128-row M tile of 128×256 (cluster 1×2), whose rows "
     "past M cost nothing, in place of two 64-row ones — H200: 72×57344×8192 143.3 → 130.5 µs, "
     "80×… 143.0 → 129.8, 96×… 134.1 → 130.3, 72×28672×4096 43.0 → 40.9 (88×… 40.0 → 41.0)",
     Waves::kAny, {}, kFastDramOnly},
    {96, 6144, kAnyN, GemmKernel::kSm90Narrow2x1,
     "M = 65–96, N ≥ 6144: 64×128 tiles whose two M tiles share the weight tile by multicast — "
     "80×10240×8192 51.4 → 42.7 µs, 80×28672×4096 61.1 → 50.5, 96×8192×8192 35.6 → 30.1, "
     "96×6144×4096 18.2 → 15.5 (at M = 112–128 64×64 stayed 0–7 % faster; "
     "bench/results/gemm-h100-sweep-narrow2x1.json)"},
    {88, 0, 6143, GemmKernel::kSm90Narrow2x1,
     "fast DRAM, M = 65–88, N < 6144: 64×128 tiles sharing the weight tile, as at N ≥ 6144 — the "
     "64×64 tile's second M tile is ≥ 40 rows past M — H200: 72×4096×14336 35.0 → 30.6 µs, "
     "66×4096×11008 27.7 → 26.3, 80×4096×4096 14.0 → 13.3 (88: equal; 96: 64×64 2–3 % faster)",
     Waves::kAny, {}, kFastDramOnly},
    {128, 6144, kAnyN, GemmKernel::kSm90Narrow2x1,
     "fast DRAM, M = 97–128, N ≥ 6144 unless 64×128 tiles take 1–1.5 waves: 64×128 tiles sharing "
     "the weight tile, as at M = 65–96 — H200: 100×57344×8192 174.2 → 130.9 µs, 128×… 144.0 → "
     "126.3, 100×8192×28672 93.3 → 69.6, 112×28672×4096 42.7 → 39.0, 128×6144×4096 15.2 → 13.6; "
     "at N = 10240 (160 tiles on 132 SMs) 64×64 stayed 3 % faster at M = 120–128",
     Waves::kNarrowNotRagged, {}, kFastDramOnly},
    {128, 0, kAnyN, GemmKernel::kSm90Small2x1,
     "M = 65–128: 64×64 tiles whose two M tiles share the weight tile by multicast, 2·N/64 CTAs — "
     "128×4096×4096 15.3 → 12.6 µs, 128×4096×14336 35.1 → 28.3, 128×10240×8192 45.6 → 39.6, "
     "128×28672×4096 54.9 → 49.9, 96×4096×14336 42.2 → 31.7; 3–4 % slower than 64×128 at "
     "96×6144×4096 and 96×8192×8192"},
    {160, 4096, 6143, GemmKernel::kSm90Swapped,
     "M = 129–160, N = 4096–6143: Dᵀ = B·Aᵀ on 64 channels × 160 tokens (64 tiles at N = 4096), no "
     "64-row tile mostly padding — H200, against the 64×128 tiles forced in the same call: "
     "160×4096×4096 15.7 → 15.1 µs, 136×4096×11008 31.7 → 29.7, 160×4096×28672 70.0 → 61.3, "
     "160×5120×8192 28.3 → 23.8; at M = 176–192 0.90–0.97× (bench/results/"
     "gemm-h200-swapped-stream-k-n4096.json, gemm-h200-swapped-sweep-55c126f.json)"},
    {192, 0, 6143, GemmKernel::kSm90Narrow,
     "M = 129–192 with N < 6144: three 64-row tiles (96 CTAs at N = 4096) instead of two 128-row ones "
     "(64) — 129×4096×4096 20.1 → 16.7 µs, 129×4096×14336 52.7 → 41.1, 192×4096×14336 44.8 → 38.8"},
    {192, 6144, kAnyN, GemmKernel::kSm90Swapped,
     "M = 129–192, N ≥ 6144 where its tiles fill their waves: Dᵀ = B·Aᵀ on 64 channels × 160 or 192 "
     "tokens, no 128-row tile mostly padding — H200: 160×8192×8192 40.2 → 27.8 µs, 136×8192×28672 "
     "119.8 → 81.3, 160×57344×8192 192.4 → 143.6, 192×28672×4096 53.2 → 47.5, 136×6144×4096 22.6 → 17.6",
     Waves::kSwappedFills},
    // M = 129–192, N ≥ 6144: the tile model too (bench/results/gemm-h100-sweep-tiles-m129-256.json).
    // The rules below it ran 128×128 ping-pong there, 1.2–1.3× slower at N ≥ 28672; above M = 192
    // that tile's second M tile is at least half full and it ran 4–11 % faster than the model's
    // pick at N ≥ 28672 (the partial-tile cost falls as the tile fills; not modelled), so the
    // model starts at M = 257 there.
    {192, 6144, kAnyN, GemmKernel::kSm90Wide,
     "the tile model's pick (kSm90Int8Tiles) — 136×28672×4096 73.0 → 61.1 µs, 144×57344×8192 "
     "280.3 → 214.3, 160×57344×8192 263.4 → 212.3",
     Waves::kAny, kSm90Int8Model},
    {256, 0, 6143, GemmKernel::kSm90Narrow2x1,
     "M = 193–256, N < 6144: four 64-row tiles sharing the weight tile by multicast in pairs (128 "
     "CTAs at N = 4096; 128×128 gives 64) — 256×4096×14336 42.8 → 34.1 µs, 256×4096×11008 34.3 → "
     "28.1, 224×4096×14336 44.6 → 39.1, 256×4096×4096 17.3 → 14.7; 200×… 1–3 % faster"},
    {256, 0, kAnyN, GemmKernel::kSm90Wide192,
     "M ≤ 256 where 128×128 tiles need 1–1.5 waves (N = 10240: 160 tiles on 132 SMs): 128×192 tiles "
     "in one wave (108 CTAs at N = 10240), as for precise fp8 — H200: 192×10240×8192 47.0 → 38.1 µs, "
     "256×… 47.1 → 38.3 against 128×256 (80 CTAs; bench/results/gemm-h200-sweep-wide192-07bdea6.json), "
     "which had replaced 128×128 (H100: 129×10240×8192 66.0 → 48.1, 256×… 53.4 → 49.0)",
     Waves::kSquareRagged},
    {256, 0, kAnyN, GemmKernel::kSm90Square,
     "M = 129–256 otherwise: 128×128 ping-pong was fastest at M = 256 on every (N, K) — "
     "256×8192×8192 46.5 → 34.5 µs, 256×28672×4096 62.8 → 59.3 against 128×256 "
     "(bench/results/gemm-h100-sweep.json)"},
    // M > 256: the tile model. Before it, 128×128 ping-pong up to M = 512 and
    // where 128×256 tiles left a ragged last wave up to M = 1024, else 128×256
    // with cluster 2×1 (the kernel without an SM count).
    {kAnyM, 0, kAnyN, GemmKernel::kSm90Wide,
     "the tile model's pick (kSm90Int8Tiles): 128×256 with cluster 2×1 or 1×2, or 128×128 ping-pong, "
     "whichever fills the waves best for its speed — 384×10240×8192 95.5 → 54.3 µs (1×2), "
     "448×57344×8192 461.5 → 326.1 (128×256), 768×8192×28672 288.0 → 243.3 (128×128)",
     Waves::kAny, kSm90Int8Model},
};

// Precise fp8: "wide" is 128×256 cooperative (int8's tile), "wide192"
// 128×192 and "coop128" 128×128 cooperative, "square" 64×128 ping-pong
// (cluster 2×1), "narrow" 64×128 ping-pong (cluster 1×2), "small" 64×64
// ping-pong, all promoting under the next wgmma (sm90_configs.h). From
// `qgemm bench gemm --sweep` on the H100: M = 384 … 4096 with the sliced
// promotion (bench/results/gemm-h100-sweep-fp8-sliced.json), M ≤ 256 on the
// smaller weights (gemm-h100-sweep-small-m.json) and earlier M = 256 … 8192
// (gemm-h100-sweep-fp8.json).
constexpr GemmRule kSm90Fp8Rules[] = {
    {8, 0, kAnyN, GemmKernel::kSm90SkinnyStream, "M ≤ 8 (decode), as for int8"},
    {16, 0, kAnyN, GemmKernel::kSm90DecodeWgmma,
     "M = 9–16 where its 64-row tiles number from 0.9 to 2 per SM (N = 7604–16896 on 132 SMs): the "
     "e4m3 wgmma converts nothing, where the skinny kernel's mma.sync runs F2FP on both operands, as "
     "long as the weight's stream at M = 16. H200, against kSm90SkinnyStream forced in one call, M = 9 / "
     "12 / 16, µs: 10240×8192 31.4 / 31.3 / 32.0 → 29.1 / 29.1 / 29.9, 14336×4096 23.8 / 24.4 / 24.6 → "
     "21.9 / 22.2 / 22.4, 8192×28672 64.3 / 65.4 / 66.6 → 62.7 / 63.0 / 63.4, 8192×8192 24.2 / 24.3 / "
     "25.0 → 24.0 / 24.2 / 24.5 (decode_wgmma_plan.h says why not elsewhere)",
     Waves::kDecodeWgmmaFillsTheGpu},
    {16, 0, kAnyN, GemmKernel::kSm90SkinnyStream, "M ≤ 16 (decode), as for int8"},
    {64, 0, kAnyN, GemmKernel::kSm90Thin48,
     "M ≤ 64 where 64×48 tiles in clusters of 1×4 are all co-resident, as for int8 — H200: "
     "24×4096×14336 27.6 → 23.6 µs, 24×4096×11008 23.2 → 19.5, 64×4096×14336 23.8 → 23.0",
     Waves::kThin48Fits},
    {32, 6144, kAnyN, GemmKernel::kSm90Swapped,
     "M = 17–32, N ≥ 6144 where its tiles fill their waves, as for int8 — H200: 24×8192×28672 74.4 → "
     "61.2 µs, 24×8192×8192 26.1 → 23.2, 32×57344×8192 131.2 → 117.9, 24×6144×4096 15.2 → 13.9; "
     "32×28672×4096 37.6 → 37.3",
     Waves::kSwappedFills},
    {64, 0, kAnyN, GemmKernel::kSm90Small1x2,
     "M ≤ 64 where 64×64 tiles fit one wave, as for int8: 64×4096×14336 33.0 → 28.9 µs, "
     "64×8192×8192 31.9 → 30.3",
     Waves::kSmallOneWave},
    {64, 0, kAnyN, GemmKernel::kSm90Narrow, "bandwidth-bound: 64×128 ping-pong, as for int8"},
    {128, 0, kAnyN, GemmKernel::kSm90Wide80x4,
     "M = 65–128 where 128×80 tiles in clusters of 1×4 are all co-resident and 64×128 tiles need "
     "more than one wave, as for int8 — H200: 72×9216×8192 35.6 → 28.0 µs, 72×9216×4096 21.5 → "
     "18.0",
     Waves::kWide80x4Fits},
    {128, 0, kAnyN, GemmKernel::kSm90Wide96x4,
     "M = 65–128 where 128×96 tiles in clusters of 1×4 are all co-resident and 128×80 ones are not, "
     "64×128 tiles needing more than one wave, as for int8 — H200: 72×10240×8192 37.0 → 29.2 µs, "
     "128×10240×8192 29.9 → 29.3",
     Waves::kWide96x4Fits},
    {128, 0, kAnyN, GemmKernel::kSm90Wide80,
     "M = 65–128 where 128×80 tiles fill one wave and 64×128 tiles need more, as for int8 — H200: "
     "128×10240×8192 36.9 → 29.4 µs, 128×9216×8192 36.3 → 28.2, 80×10240×8192 40.1 → 35.4",
     Waves::kWide80OneWave},
    {128, 0, kAnyN, GemmKernel::kSm90Wide96,
     "M = 65–128 where 128×96 tiles fill one wave and 128×80 and 64×128 tiles need more, as for "
     "int8 — H200: 128×11008×4096 22.4 → 19.8 µs, 128×12288×8192 37.5 → 33.4, 80×11008×4096 "
     "23.9 → 22.4",
     Waves::kWide96OneWave},
    {96, 28672, kAnyN, GemmKernel::kSm90Wide1x2,
     "fast DRAM, M = 65–96, N ≥ 28672: 128×256 (cluster 1×2), as for int8 — H200: 72×57344×8192 "
     "144.6 → 130.1 µs, 96×… 135.8 → 130.0, 80×28672×4096 42.5 → 40.2",
     Waves::kAny, {}, kFastDramOnly},
    {88, 0, 6143, GemmKernel::kSm90Square,
     "fast DRAM, M = 65–88, N < 6144: 64×128 tiles sharing B, as for int8 — H200: 72×4096×14336 "
     "34.8 → 30.8 µs, 66×4096×4096 15.3 → 14.3",
     Waves::kAny, {}, kFastDramOnly},
    {128, 0, 6143, GemmKernel::kSm90Small2x1,
     "M = 65–128, N < 6144: 64×64 tiles sharing B, as for int8 — 128×4096×4096 15.4 → 12.7 µs, "
     "128×4096×14336 35.0 → 28.4, 96×4096×14336 42.7 → 31.9"},
    {128, 0, kAnyN, GemmKernel::kSm90Square,
     "M = 65–128, N ≥ 6144: 64×128 tiles sharing B (cluster 2×1) — 96×6144×4096 19.9 → 16.2 µs, "
     "96×28672×4096 60.9 → 50.5, 128×8192×8192 32.9 → 31.1 (64×64 was 7 % faster at 128×10240×8192 "
     "only)"},
    {160, 4096, 6143, GemmKernel::kSm90Swapped,
     "M = 129–160, N = 4096–6143: the swapped 64×160 tiles, as for int8 — H200: 136×4096×4096 16.7 → "
     "15.7 µs, 160×4096×8192 25.8 → 23.7, 160×4096×28672 74.9 → 62.8, 160×5120×8192 28.9 → 24.2"},
    {192, 0, 6143, GemmKernel::kSm90Narrow,
     "M = 129–192, N < 6144: three 64-row tiles along M, as for int8 — 129×4096×14336 50.5 → 41.6 "
     "µs, 192×4096×14336 43.1 → 39.1"},
    {192, 6144, kAnyN, GemmKernel::kSm90Swapped,
     "M = 129–192, N ≥ 6144 where its tiles fill their waves, as for int8 — H200: 160×8192×8192 "
     "39.8 → 27.9 µs, 136×8192×28672 119.0 → 83.2, 160×57344×8192 195.8 → 157.0, 192×28672×4096 "
     "53.4 → 49.5, 136×6144×4096 22.3 → 18.0",
     Waves::kSwappedFills},
    // M = 129–192, N ≥ 6144: the tile model, as for int8.
    {192, 6144, kAnyN, GemmKernel::kSm90Wide,
     "the tile model's pick (kSm90Fp8Tiles) — 136×28672×4096 75.5 → 59.5 µs, 136×57344×8192 302.1 → "
     "239.8 (128×192)",
     Waves::kAny, kSm90Fp8Model},
    {256, 0, kAnyN, GemmKernel::kSm90Wide192,
     "M ≤ 256 where 128×128 tiles need 1–1.5 waves (N = 10240): 128×192 tiles in one wave — "
     "129×10240×8192 67.7 → 50.8 µs, 192×… 58.4 → 46.1, 256×… 55.6 → 46.0",
     Waves::kSquareRagged},
    {256, 6144, kAnyN, GemmKernel::kSm90Coop128,
     "at N ≥ 6144 the 128×128 cooperative tile was 25–35 % faster than 64×128 ping-pong at M = 256"},
    {256, 0, kAnyN, GemmKernel::kSm90Square, "N = 4096: 64×128 tiles fill more SMs (equal or faster)"},
    // M > 256: the tile model (the kernel without an SM count: 128×256).
    {kAnyM, 0, kAnyN, GemmKernel::kSm90Wide,
     "the tile model's pick (kSm90Fp8Tiles): 128×256 with cluster 2×1 or 1×2, 128×192 or 128×128 "
     "cooperative — 8192³ 850 µs (128×256) against 907 (128×192) and 977 (128×128), 384×10240×8192 "
     "75.4 → 54.3 (1×2), 768×4096×14336 65.2 (128×192) against 76.6 and 82.4",
     Waves::kAny, kSm90Fp8Model},
};

// fp8 with fast accumulation (Fp8Accumulation::kFast, args.fp8_fast_accum)
// on sm_90 takes its kernel from kSm90Int8Rules: with one accumulator set
// fp8 runs on int8's tiles (sm90_configs.h: Fp8FastWide / Fp8FastWide192 /
// Fp8FastWide1x2 / Fp8FastSquare / Fp8FastNarrow / Fp8FastSmall* behind
// kSm90Wide / kSm90Wide192 / kSm90Wide1x2 / kSm90Square / kSm90Narrow /
// kSm90Small*) with int8's
// registers, shared-memory bytes per MAC and
// wgmma rate, so int8's measured buckets apply; sweeps
// (bench/results/gemm-h100-sweep-fp8fast.json, gemm-h100-sweep-small-m.json)
// confirmed them. This says where the chosen kernel runs precise instead
// (kFast permits the faster mode; where the precise kernel is faster, it
// runs, with its precise result):
//   - the skinny kernels (M ≤ 16; on sm_90 also kSm90SkinnyStream) have no
//     fast mode: each mma.sync m16n8k32 returns its sum to an fp32 register
//     every 32 products, finer than the precise wgmma mainloop's promotion;
//   - kSm90Narrow2x1 (M = 65–96 with N ≥ 6144, M = 193–256 with N < 6144;
//     on fast DRAM also M = 97–128 with N ≥ 6144 and M = 65–88 with
//     N < 6144):
//     the int8 tile has no fast fp8 variant; precise fp8 runs it as its
//     kSm90Square (64×128 ping-pong, cluster 2×1, overlapped promotion),
//     which beat every fast tile there — H100, same call: 256×4096×4096
//     14.5 µs against 16.1 (fast 64×64), 256×4096×14336 34.6 against 41.9;
//     80×10240×8192 43.4 against 51.1 (fast 64×64 cluster 2×1); H200,
//     interleaved, against the fast 64×64 cluster-2×1 tile: 100×57344×8192
//     174.8 → 132.5, 128×8192×28672 71.0 → 65.0, 72×4096×14336 34.7 → 30.8;
//   - kSm90Decode (M ≤ 16 with a workspace): built precise only; its
//     promotion once per 128-element k-tile costs nothing beside the
//     weight's stream (8 accumulator registers); the same for
//     kSm90DecodeWgmma (M = 9–16), which fast fp8 reaches through the fp8
//     table (table_kernel);
//   - kSm90Direct (outputs the TMA epilogue cannot store), kSm90Swapped
//     (M = 17–32 and 129–192) and kSm90SwappedStreamK (M = 129–192): built
//     precise only, to keep the instantiations few.
constexpr bool fp8_fast_runs_precise(GemmKernel kernel) {
  return kernel == GemmKernel::kSkinny || kernel == GemmKernel::kSm90SkinnyStream ||
         kernel == GemmKernel::kSm90Decode || kernel == GemmKernel::kSm90DecodeWgmma ||
         kernel == GemmKernel::kSm90Narrow2x1 || kernel == GemmKernel::kSm90Direct ||
         kernel == GemmKernel::kSm90Swapped || kernel == GemmKernel::kSm90SwappedStreamK;
}

// The kernels with a fast-accumulation fp8 build (sm90_fp8fast_*.cu, and
// sm90_streamk_*.cu for kSm90StreamK): int8's Hopper tiles.
constexpr bool has_fp8_fast_variant(GemmKernel kernel) {
  return kernel == GemmKernel::kSm90Wide || kernel == GemmKernel::kSm90Wide192 || kernel == GemmKernel::kSm90Wide1x2 ||
         kernel == GemmKernel::kSm90Square ||
         kernel == GemmKernel::kSm90Narrow || kernel == GemmKernel::kSm90Small1x2 || kernel == GemmKernel::kSm90Small2x1 ||
         kernel == GemmKernel::kSm90StreamK || kernel == GemmKernel::kSm90Wide80 || kernel == GemmKernel::kSm90Wide96 ||
         kernel == GemmKernel::kSm90Thin48 || kernel == GemmKernel::kSm90Wide80x4 || kernel == GemmKernel::kSm90Wide96x4;
}

// The Hopper CUTLASS kernels that store D through TMA.
constexpr bool is_sm90_tma_kernel(GemmKernel kernel) {
  switch (kernel) {
    case GemmKernel::kSm90Wide:
    case GemmKernel::kSm90Square:
    case GemmKernel::kSm90Narrow:
    case GemmKernel::kSm90Small1x2:
    case GemmKernel::kSm90Small2x1:
    case GemmKernel::kSm90Narrow2x1:
    case GemmKernel::kSm90Wide192:
    case GemmKernel::kSm90Coop128:
    case GemmKernel::kSm90Wide1x2:
    case GemmKernel::kSm90StreamK:
    case GemmKernel::kSm90Wide80:
    case GemmKernel::kSm90Wide96:
    case GemmKernel::kSm90Thin48:
    case GemmKernel::kSm90Wide80x4:
    case GemmKernel::kSm90Wide96x4:
    case GemmKernel::kSm90Swapped:
    case GemmKernel::kSm90SwappedStreamK:
      return true;
    default:
      return false;
  }
}

// The kernel that runs where the table's CUTLASS kernel cannot take the
// output with its 16-byte accesses (N or ldo not a multiple of 8, an output
// base off a 16-byte line) while A and B still load with them: on Hopper the
// same mainloop with narrow stores (docs/gemm.md, "Outputs TMA cannot
// store"; design 014). The mma.sync tiles have no such twin (CUTLASS 2.x's
// epilogue for int32 accumulators takes only 8- or 16-element accesses), so
// their problems keep the fallback; the skinny kernel and the fallback take
// any output already.
constexpr GemmKernel unaligned_output_kernel(GemmKernel chosen) {
  if (chosen == GemmKernel::kSm90Decode) return GemmKernel::kSm90SkinnyStream;  // M ≤ 16: the other decode kernel
  return is_sm90_tma_kernel(chosen) ? GemmKernel::kSm90Direct : chosen;
}

// The kernel that takes the call where the table's kernel declines it at run
// time for what the table does not see: the swapped decode kernel and the
// swapped stream-K tiles a workspace CUTLASS finds too small, the fp8 wgmma
// decode kernel a K or N beyond its 32-bit TMA coordinates. Each twin needs
// no workspace and runs fp8 precise as its kernel does. Any other kernel is
// its own (none): what it declines goes to the fallback.
constexpr GemmKernel declined_kernel_twin(GemmKernel chosen) {
  switch (chosen) {
    case GemmKernel::kSm90Decode:
    case GemmKernel::kSm90DecodeWgmma: return GemmKernel::kSm90SkinnyStream;  // the other decode kernel
    case GemmKernel::kSm90SwappedStreamK: return GemmKernel::kSm90Swapped;     // the same tiles whole
    default: return chosen;
  }
}

// Ampere / Ada, int8 (sm_80 code; also what an sm_89 GPU runs for int8).
constexpr GemmRule kSm80Int8Rules[] = {
    {16, 0, kAnyN, GemmKernel::kSkinny, "weight-bandwidth-bound (see sm90)"},
    {128, 0, kAnyN, GemmKernel::kSm80Small, "64×128 tiles: twice the CTAs of 128×128 at small M"},
    {kAnyM, 0, kAnyN, GemmKernel::kSm80Large, "128×128×64, 3 stages: CUTLASS's best int8 tile on A100"},
};

// Ada, fp8 (sm_89): the int8 rules' kernels built for e4m3 (mma.sync
// m16n8k32 has the same shape, operand bytes and, on Ada, the same dense
// rate for e4m3 as for int8, so int8's choices carry over; not measured on
// an Ada GPU, none being at hand).
constexpr GemmRule kSm89Fp8Rules[] = {
    {16, 0, kAnyN, GemmKernel::kSkinny, "mma.sync e4m3, weight-bandwidth-bound (as int8)"},
    {128, 0, kAnyN, GemmKernel::kSm80Small, "64×128 tiles: twice the CTAs of 128×128 at small M (as int8)"},
    {kAnyM, 0, kAnyN, GemmKernel::kSm80Large, "128×128×64, 3 stages (int8's tile: same bytes per k step)"},
};

// The table's kernel for an M×N×K problem on a GPU of compute capability
// `arch` (major · 10 + minor) with `sm_count` SMs and `dram_gbps` of peak DRAM
// bandwidth: the first rule that holds (pick_rule) or its tile model's pick,
// then, where the call brings a workspace of at least
// stream_k_workspace_bytes, the swapped decode kernel at M ≤ 16 on a large
// weight (decode_takes), the swapped stream-K tiles at M = 129–192 on
// Hopper (swapped_stream_k_takes) or stream-K where the rule's model takes
// it (rule_takes_stream_k). No rule: the fallback. This is the choice before
// the call's layout is looked at: scaled_mm_cuda then sends outputs the TMA
// epilogue cannot store to the direct-store twin (fit_to_layout), and fp8
// with fast accumulation runs precise where fp8_fast_runs_precise says. Host
// code: `qgemm dispatch` prints it for any GPU without one.
template <size_t N>
constexpr GemmKernel table_kernel(const GemmRule (&rules)[N], int64_t m, int64_t n, int64_t k, int sm_count,
                                  DramRegime regime, bool workspace) {
  const GemmRule* rule = pick_rule(rules, m, n, sm_count, regime);
  if (rule == nullptr) return GemmKernel::kFallback;
  const GemmKernel kernel = rule_kernel(*rule, m, n, sm_count, regime);
  if (workspace && kernel == GemmKernel::kSm90SkinnyStream && decode_takes(m, n, k, sm_count)) {
    return GemmKernel::kSm90Decode;
  }
  return workspace && rule_takes_stream_k(*rule, m, n, k, sm_count, regime) ? GemmKernel::kSm90StreamK : kernel;
}
// `int8`: int8 inputs, else fp8 e4m3; `fp8_fast`: fp8 with fast accumulation,
// which on Hopper reads int8's table (its kernels are int8's tiles) above
// M = 16, and the fp8 table at M ≤ 16, where no decode kernel has a fast
// mode (fp8_fast_runs_precise) and the fp8 wgmma one is fp8's own.
constexpr GemmKernel table_kernel(int arch, bool int8, bool fp8_fast, int64_t m, int64_t n, int64_t k, int sm_count,
                                  int64_t dram_gbps, bool workspace) {
  const DramRegime regime = dram_regime(k, dram_gbps, sm_count);
  if (arch / 10 == 9) {
    if (workspace && swapped_stream_k_takes(m, n, k, sm_count)) return GemmKernel::kSm90SwappedStreamK;
    return int8 || (fp8_fast && m > 16) ? table_kernel(kSm90Int8Rules, m, n, k, sm_count, regime, workspace)
                                        : table_kernel(kSm90Fp8Rules, m, n, k, sm_count, regime, workspace);
  }
  if (int8 && arch >= 80) return table_kernel(kSm80Int8Rules, m, n, k, sm_count, regime, workspace);
  if (!int8 && arch >= 89) return table_kernel(kSm89Fp8Rules, m, n, k, sm_count, regime, workspace);
  return GemmKernel::kFallback;
}

}  // namespace qgemm::detail
