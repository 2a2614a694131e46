// dispatch_table.h — which kernel serves which scaled-GEMM problem, per
// architecture, with the reason next to each choice. Rules are read top to
// bottom; the first whose bounds hold wins. A kernel that cannot take the
// arguments (alignment, strides: see scaled_mm_cuda.cu) hands the problem
// to the next fitting rule and finally to the fallback, so every shape runs.
// Tiles, clusters and schedules of the CUTLASS kernels: sm90_configs.h,
// sm80_configs.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "gemm/cuda/kernels.h"

namespace qgemm::detail {

// A rule's condition on how the problem's tiles fill the GPU's SMs.
enum class Waves : uint8_t {
  kAny,
  // 128×256 tiles leave the last wave less than half full (ragged_last_wave).
  kWideRagged,
  // 128×128 tiles need more than one wave and less than one and a half
  // (square_tiles_ragged).
  kSquareRagged,
  // 64×64 tiles fit in one wave (small_tiles_fit_one_wave).
  kSmallOneWave,
  // Precise fp8: the 128×256 / 128×192 tile is the one fp8_precise_tile
  // models fastest.
  kFp8Wide256Best,
  kFp8Wide192Best,
};

struct GemmRule {
  int64_t max_m;  // the rule applies when M ≤ max_m …
  int64_t min_n;  // … and min_n ≤ N ≤ max_n …
  int64_t max_n;
  GemmKernel kernel;
  const char* why;
  Waves waves = Waves::kAny;  // … and the tiles fill the SMs as this says.
};

constexpr int64_t tile_count(int64_t m, int64_t n, int64_t tile_m, int64_t tile_n) {
  return ((m + tile_m - 1) / tile_m) * ((n + tile_n - 1) / tile_n);
}

// True when ceil(M/128)·ceil(N/256) tiles on `sm_count` SMs leave the last
// wave less than half full (e.g. 1024×6144: 192 tiles = 1.45 waves on 132).
constexpr bool ragged_last_wave(int64_t m, int64_t n, int sm_count) {
  const int64_t tiles = tile_count(m, n, 128, 256);
  const int64_t last = tiles % sm_count;
  return sm_count > 0 && last != 0 && 2 * last < sm_count;
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

// Precise fp8 above M = 256: which cooperative tile (cluster 2×1) fills the
// SMs best for its speed. Modelled time = waves × tile area × time per MAC,
// where waves = ceil(tiles / SMs), the M tiles rounded up to the cluster's
// two, and the times per MAC are the tiles' at 8192³ on the H100 (850 / 907 /
// 977 µs: 1, 1.067, 1.15). Against the fastest of the three measured on
// every (N, K) of the grid at M = 384 … 4096 and at two M = 8192
// shapes (50 shapes), the model's pick cost 0.4 % (geomean), at most 6 %
// (768×57344×8192, 512×28672×4096).
enum class Fp8Tile : uint8_t { k128x256, k128x192, k128x128 };
constexpr Fp8Tile fp8_precise_tile(int64_t m, int64_t n, int sm_count) {
  const auto modelled = [&](int64_t tile_n, int64_t per_mac) {
    const int64_t m_tiles = ((m + 127) / 128 + 1) / 2 * 2;
    const int64_t tiles = m_tiles * ((n + tile_n - 1) / tile_n);
    const int64_t waves = (tiles + sm_count - 1) / sm_count;
    return waves * 128 * tile_n * per_mac;
  };
  const int64_t wide = modelled(256, 1000), wide192 = modelled(192, 1067), coop128 = modelled(128, 1150);
  if (wide <= wide192 && wide <= coop128) return Fp8Tile::k128x256;
  return wide192 <= coop128 ? Fp8Tile::k128x192 : Fp8Tile::k128x128;
}

constexpr bool waves_hold(Waves waves, int64_t m, int64_t n, int sm_count) {
  switch (waves) {
    case Waves::kAny: return true;
    case Waves::kWideRagged: return ragged_last_wave(m, n, sm_count);
    case Waves::kSquareRagged: return square_tiles_ragged(m, n, sm_count);
    case Waves::kSmallOneWave: return small_tiles_fit_one_wave(m, n, sm_count);
    case Waves::kFp8Wide256Best: return sm_count > 0 && fp8_precise_tile(m, n, sm_count) == Fp8Tile::k128x256;
    case Waves::kFp8Wide192Best: return sm_count > 0 && fp8_precise_tile(m, n, sm_count) == Fp8Tile::k128x192;
  }
  return false;
}

// The first rule of `rules` that holds for an M×N problem on `sm_count`
// SMs, or nullptr (then the fallback runs).
template <size_t N>
constexpr const GemmRule* pick_rule(const GemmRule (&rules)[N], int64_t m, int64_t n, int sm_count) {
  for (const GemmRule& rule : rules) {
    if (m <= rule.max_m && n >= rule.min_n && n <= rule.max_n && waves_hold(rule.waves, m, n, sm_count)) {
      return &rule;
    }
  }
  return nullptr;
}

constexpr int64_t kAnyM = std::numeric_limits<int64_t>::max();
constexpr int64_t kAnyN = std::numeric_limits<int64_t>::max();

// Hopper (sm_90a). Chosen from `qgemm bench gemm --sweep` on an H100 SXM
// (bench/results/gemm-h100-sweep.json: every config timed on every shape;
// M ≤ 256 on the smaller weights: bench/results/gemm-h100-sweep-small-m.json).
// The µs below are H100 medians from one call, before → after.
constexpr GemmRule kSm90Int8Rules[] = {
    {16, 0, kAnyN, GemmKernel::kSm90SkinnyStream,
     "M ≤ 16 (decode): 16-column tiles on one persistent CTA per SM, the weight streamed into shared "
     "memory by bulk copies (4 stages of 16 KB in flight per SM). Against the register-ring skinny "
     "kernel (same call, bench/results/gemm-h100-skinny-stream-ab.json): M ≤ 8 0.91× the time "
     "(geomean of int8 and fp8 over the 8 (N, K), never slower), M = 9–16 0.90× (at most 2 % slower: "
     "16×8192×28672 int8); 1×4096×14336 29.7 → 24.9 µs, 16×57344×8192 175.9 → 165.7. It also beat "
     "the 64×64 CUTLASS tile that fp8 M = 9–16 ran at N = 8192 (16×8192×8192 fp8 32.1 → 29.9 µs)"},
    {64, 0, kAnyN, GemmKernel::kSm90Small1x2,
     "M ≤ 64 where 64×64 tiles fit one wave: twice the CTAs of 64×128 pull the weight — "
     "64×4096×14336 32.9 → 28.6 µs, 64×4096×4096 14.3 → 13.3, 32×8192×8192 34.6 → 32.1; with more "
     "than one wave 64×128 stayed faster (32×10240×8192 39.4 vs 42.3, 32×28672×4096 49.8 vs 52.5)",
     Waves::kSmallOneWave},
    {64, 0, kAnyN, GemmKernel::kSm90Narrow,
     "bandwidth-bound: 64×128 tiles (the smallest wgmma M) waste the least MMA work; TMA keeps enough "
     "bytes in flight"},
    {96, 6144, kAnyN, GemmKernel::kSm90Narrow2x1,
     "M = 65–96, N ≥ 6144: 64×128 tiles whose two M tiles share the weight tile by multicast — "
     "80×10240×8192 51.4 → 42.7 µs, 80×28672×4096 61.1 → 50.5, 96×8192×8192 35.6 → 30.1, "
     "96×6144×4096 18.2 → 15.5 (at M = 112–128 64×64 stayed 0–7 % faster; "
     "bench/results/gemm-h100-sweep-narrow2x1.json)"},
    {128, 0, kAnyN, GemmKernel::kSm90Small2x1,
     "M = 65–128: 64×64 tiles whose two M tiles share the weight tile by multicast, 2·N/64 CTAs — "
     "128×4096×4096 15.3 → 12.6 µs, 128×4096×14336 35.1 → 28.3, 128×10240×8192 45.6 → 39.6, "
     "128×28672×4096 54.9 → 49.9, 96×4096×14336 42.2 → 31.7; 3–4 % slower than 64×128 at "
     "96×6144×4096 and 96×8192×8192"},
    {192, 0, 6143, GemmKernel::kSm90Narrow,
     "M = 129–192 with N < 6144: three 64-row tiles (96 CTAs at N = 4096) instead of two 128-row ones "
     "(64) — 129×4096×4096 20.1 → 16.7 µs, 129×4096×14336 52.7 → 41.1, 192×4096×14336 44.8 → 38.8"},
    {256, 0, 6143, GemmKernel::kSm90Narrow2x1,
     "M = 193–256, N < 6144: four 64-row tiles sharing the weight tile by multicast in pairs (128 "
     "CTAs at N = 4096; 128×128 gives 64) — 256×4096×14336 42.8 → 34.1 µs, 256×4096×11008 34.3 → "
     "28.1, 224×4096×14336 44.6 → 39.1, 256×4096×4096 17.3 → 14.7; 200×… 1–3 % faster"},
    {256, 0, kAnyN, GemmKernel::kSm90Wide,
     "M ≤ 256 where 128×128 tiles need 1–1.5 waves (N = 10240: 160 tiles on 132 SMs): 128×256 tiles "
     "in one wave — 129×10240×8192 66.0 → 48.1 µs, 192×… 56.4 → 48.5, 256×… 53.4 → 49.0",
     Waves::kSquareRagged},
    {512, 0, kAnyN, GemmKernel::kSm90Square,
     "128×128 ping-pong was fastest at M = 256 and 512 on every (N, K): 128×256 tiles leave SMs idle"},
    {1024, 0, kAnyN, GemmKernel::kSm90Square,
     "M ≤ 1024 where 128×256 tiles leave the last wave of SMs less than half full: 128×128 ping-pong "
     "(twice the tiles) — 1024×6144×4096 (1.45 waves) 50 → 41 µs, 1024×10240×8192 (2.4 waves) "
     "133 → 124 µs on the H100; where the waves are full (N = 8192, 28672) 128×256 stayed faster",
     Waves::kWideRagged},
    {kAnyM, 0, kAnyN, GemmKernel::kSm90Wide,
     "compute-bound: 128×256 cooperative tiles, the highest MMA per shared-memory byte (fastest at "
     "M = 1024 with N = 4096 and at most M = 2048 / 4096 shapes; within 1–6 % of 128×128 elsewhere)"},
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
    {16, 0, kAnyN, GemmKernel::kSm90SkinnyStream, "M ≤ 16 (decode), as for int8"},
    {64, 0, kAnyN, GemmKernel::kSm90Small1x2,
     "M ≤ 64 where 64×64 tiles fit one wave, as for int8: 64×4096×14336 33.0 → 28.9 µs, "
     "64×8192×8192 31.9 → 30.3",
     Waves::kSmallOneWave},
    {64, 0, kAnyN, GemmKernel::kSm90Narrow, "bandwidth-bound: 64×128 ping-pong, as for int8"},
    {128, 0, 6143, GemmKernel::kSm90Small2x1,
     "M = 65–128, N < 6144: 64×64 tiles sharing B, as for int8 — 128×4096×4096 15.4 → 12.7 µs, "
     "128×4096×14336 35.0 → 28.4, 96×4096×14336 42.7 → 31.9"},
    {128, 0, kAnyN, GemmKernel::kSm90Square,
     "M = 65–128, N ≥ 6144: 64×128 tiles sharing B (cluster 2×1) — 96×6144×4096 19.9 → 16.2 µs, "
     "96×28672×4096 60.9 → 50.5, 128×8192×8192 32.9 → 31.1 (64×64 was 7 % faster at 128×10240×8192 "
     "only)"},
    {192, 0, 6143, GemmKernel::kSm90Narrow,
     "M = 129–192, N < 6144: three 64-row tiles along M, as for int8 — 129×4096×14336 50.5 → 41.6 "
     "µs, 192×4096×14336 43.1 → 39.1"},
    {256, 0, kAnyN, GemmKernel::kSm90Wide192,
     "M ≤ 256 where 128×128 tiles need 1–1.5 waves (N = 10240): 128×192 tiles in one wave — "
     "129×10240×8192 67.7 → 50.8 µs, 192×… 58.4 → 46.1, 256×… 55.6 → 46.0",
     Waves::kSquareRagged},
    {256, 6144, kAnyN, GemmKernel::kSm90Coop128,
     "at N ≥ 6144 the 128×128 cooperative tile was 25–35 % faster than 64×128 ping-pong at M = 256"},
    {256, 0, kAnyN, GemmKernel::kSm90Square, "N = 4096: 64×128 tiles fill more SMs (equal or faster)"},
    {kAnyM, 0, kAnyN, GemmKernel::kSm90Wide,
     "M > 256 where 128×256 tiles fill their waves best for their speed (fp8_precise_tile): e.g. "
     "8192³ 850 µs against 907 (128×192) and 977 (128×128), 384×8192×28672 160 against 239 and 234",
     Waves::kFp8Wide256Best},
    {kAnyM, 0, kAnyN, GemmKernel::kSm90Wide192,
     "M > 256 where 128×192 tiles do: 384×10240×8192 75.5 µs against 92.6 (128×256) and 97.4 "
     "(128×128), 768×4096×14336 65.2 against 76.6 and 82.4",
     Waves::kFp8Wide192Best},
    {kAnyM, 0, kAnyN, GemmKernel::kSm90Coop128,
     "M > 256 where 128×128's twice as many tiles fill the SMs best: 512×4096×4096 18.1 µs against "
     "27.7 (128×256) and 22.8 (128×192), 1024×10240×8192 129 against 143 and 150"},
};

// fp8 with fast accumulation (Fp8Accumulation::kFast, args.fp8_fast_accum)
// on sm_90 takes its kernel from kSm90Int8Rules: with one accumulator set
// fp8 runs on int8's tiles (sm90_configs.h: Fp8FastWide / Fp8FastSquare /
// Fp8FastNarrow / Fp8FastSmall* behind kSm90Wide / kSm90Square / kSm90Narrow
// / kSm90Small*) with int8's registers, shared-memory bytes per MAC and
// wgmma rate, so int8's measured buckets apply; sweeps
// (bench/results/gemm-h100-sweep-fp8fast.json, gemm-h100-sweep-small-m.json)
// confirmed them. This says where the chosen kernel runs precise instead
// (kFast permits the faster mode; where the precise kernel is faster, it
// runs, with its precise result):
//   - the skinny kernels (M ≤ 16; on sm_90 also kSm90SkinnyStream) have no
//     fast mode: each mma.sync m16n8k32 returns its sum to an fp32 register
//     every 32 products, finer than the precise wgmma mainloop's promotion;
//   - kSm90Narrow2x1 (M = 65–96 with N ≥ 6144, M = 193–256 with N < 6144):
//     the int8 tile has no fast fp8 variant; precise fp8 runs it as its
//     kSm90Square (64×128 ping-pong, cluster 2×1, overlapped promotion),
//     which beat every fast tile there — H100, same call: 256×4096×4096
//     14.5 µs against 16.1 (fast 64×64), 256×4096×14336 34.6 against 41.9;
//     80×10240×8192 43.4 against 51.1 (fast 64×64 cluster 2×1);
//   - kSm90Direct (outputs the TMA epilogue cannot store): built precise
//     only, one kernel per output dtype, to keep the instantiations few.
constexpr bool fp8_fast_runs_precise(GemmKernel kernel) {
  return kernel == GemmKernel::kSkinny || kernel == GemmKernel::kSm90SkinnyStream ||
         kernel == GemmKernel::kSm90Narrow2x1 || kernel == GemmKernel::kSm90Direct;
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
  return is_sm90_tma_kernel(chosen) ? GemmKernel::kSm90Direct : chosen;
}

// The Hopper kernels' persistent tile scheduler hands each wave of CTAs a
// run of output tiles in raster order (along N when there are no more N
// tiles than M tiles, else along M). With `swizzle` S > 1 (CUTLASS's
// max_swizzle_size) the run snakes through bands of S tiles instead, so a
// wave covers a squarer block of the output and fetches fewer distinct A
// and B panels per k step from HBM (M = 8192, 128×256 tiles on 132 SMs: a
// wave spanning ~2 rows of 40–224 tiles against ~8 × 16). Measured on the
// H100 (`qgemm bench gemm --swizzle-sweep`, a scratch option timing every
// swizzle 1/2/4/8 × raster order in one call, bench/results/
// gemm-h100-swizzle-sweep*.json), swizzle 8 against the default, µs:
//   8192×10240×8192  int8 1092 → 998, fp8 1308 → 1258, fp8 fast 1124 → 1047
//   8192×28672×4096  int8 1607 → 1475, fp8 1833 → 1693, fp8 fast 1553 → 1471
//   8192×57344×8192  int8 5818 → 5446, fp8 6872 → 6577, fp8 fast 5987 → 5688
//   8192×8192×8192   fp8 fast 904 → 787 and 896 → 797 (two calls; an
//                    in-call A/B against M = 8184, unswizzled, then read
//                    11 % faster and 4 % slower: kept, the weakest case —
//                    docs/gemm.md); int8 1.5–3 % slower, precise fp8
//                    (128×192 tiles) 13 % slower
// and no better at M ≤ 4096 (4096×57344×8192 within ±2 %), 2× slower at
// M = 1024 (8 row tiles of 128: 1024×57344×8192 619 → 1388 µs).
// `fp8_fast`: fp8 inputs with fast accumulation.
constexpr int sm90_tile_swizzle(int64_t m, int64_t n, bool fp8_fast) {
  const int64_t min_n = fp8_fast ? 8192 : 10240;
  return m >= 8192 && n >= min_n ? 8 : 1;
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

}  // namespace qgemm::detail
