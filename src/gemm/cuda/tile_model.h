// tile_model.h — the Hopper tile model (M > 256 and some smaller bands):
// each candidate tile's time per MAC, measured, times the waves its tiles
// take, and the stream-K candidate's time with its fix-up; the dispatch
// rules (dispatch_table.h) that carry a model run its fastest candidate.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/dram_bandwidth.h"
#include "gemm/cuda/kernels.h"
#include "gemm/cuda/tile_waves.h"

namespace qgemm::detail {

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

}  // namespace qgemm::detail
