// dispatch_table.h — which kernel serves which scaled-GEMM problem, per
// architecture, with the reason next to each choice. Rules are read top to
// bottom; the first whose bounds hold wins. A kernel that cannot take the
// arguments (alignment, strides: see scaled_mm_cuda.cu) hands the problem
// to the next fitting rule and finally to the fallback, so every shape runs.
// Tiles, clusters and schedules of the CUTLASS kernels: sm90_configs.h,
// sm80_configs.h.
#pragma once

#include <cstdint>
#include <limits>

#include "gemm/cuda/kernels.h"

namespace qgemm::detail {

struct GemmRule {
  int64_t max_m;  // the rule applies when M ≤ max_m …
  int64_t min_n;  // … and N ≥ min_n …
  GemmKernel kernel;
  const char* why;
  // … and, if set, only when the 128×256 tiling fills its last wave of SMs
  // less than half (ragged_last_wave in scaled_mm_cuda.cu).
  bool only_ragged_wide_waves = false;
  // fp8 fast-accumulation table only: run the precise kernel (Fp8Accumulation
  // kFast permits the faster mode; where the precise kernel is faster, it runs).
  bool runs_precise_fp8 = false;
};

// True when ceil(M/128)·ceil(N/256) tiles on `sm_count` SMs leave the last
// wave less than half full (e.g. 1024×6144: 192 tiles = 1.45 waves on 132).
constexpr bool ragged_last_wave(int64_t m, int64_t n, int sm_count) {
  const int64_t tiles = ((m + 127) / 128) * ((n + 255) / 256);
  const int64_t last = tiles % sm_count;
  return sm_count > 0 && last != 0 && 2 * last < sm_count;
}

constexpr int64_t kAnyM = std::numeric_limits<int64_t>::max();

// Hopper (sm_90a). Chosen from `qgemm bench gemm --sweep` on an H100 SXM
// (bench/results/gemm-h100-sweep.json: every config timed on every shape).
constexpr GemmRule kSm90Int8Rules[] = {
    {16, 0, GemmKernel::kSkinny,
     "M ≤ 16 (decode; M = 1 is also below the CUTLASS kernels' M ≥ 2): the persistent skinny kernel "
     "streams B over every SM (16-column tiles, loads in flight across tiles); the 64×128 tile gives "
     "only N/128 CTAs. Measured 10–30 % faster at N ≤ 10240, within ±4 % at N = 28672 / 57344, "
     "slower only at N = 8192 (1–16 %, docs/gemm.md)"},
    {128, 0, GemmKernel::kSm90Narrow,
     "bandwidth-bound: 64×128 tiles (the smallest wgmma M) waste the least MMA work and give the "
     "most CTAs along N; TMA keeps enough bytes in flight"},
    {512, 0, GemmKernel::kSm90Square,
     "128×128 ping-pong was fastest at M = 256 and 512 on every (N, K): 128×256 tiles leave SMs idle"},
    {1024, 0, GemmKernel::kSm90Square,
     "M ≤ 1024 where 128×256 tiles leave the last wave of SMs less than half full: 128×128 ping-pong "
     "(twice the tiles) — 1024×6144×4096 (1.45 waves) 50 → 41 µs, 1024×10240×8192 (2.4 waves) "
     "133 → 124 µs on the H100; where the waves are full (N = 8192, 28672) 128×256 stayed faster",
     true},
    {kAnyM, 0, GemmKernel::kSm90Wide,
     "compute-bound: 128×256 cooperative tiles, the highest MMA per shared-memory byte (fastest at "
     "M = 1024 with N = 4096 and at most M = 2048 / 4096 shapes; within 1–6 % of 128×128 elsewhere)"},
};

// Precise fp8: "wide" is 128×128 cooperative, "square" 64×128 ping-pong
// (cluster 2×1), "narrow" 64×128 ping-pong (cluster 1×2), all three with the
// overlapped promotion, and "wide192" 128×192 cooperative without it (see
// sm90_configs.h: the precise mainloop needs two or three accumulator sets).
// From `qgemm bench gemm --sweep` over M = 256 … 8192 on the H100
// (bench/results/gemm-h100-sweep-fp8.json).
constexpr GemmRule kSm90Fp8Rules[] = {
    {16, 0, GemmKernel::kSkinny, "M ≤ 16 (decode), as for int8"},
    {128, 0, GemmKernel::kSm90Narrow, "bandwidth-bound: 64×128 ping-pong, as for int8"},
    {256, 6144, GemmKernel::kSm90Wide,
     "at N ≥ 6144 the 128×128 cooperative tile was 25–35 % faster than 64×128 ping-pong at M = 256"},
    {256, 0, GemmKernel::kSm90Square, "N = 4096: 64×128 tiles fill more SMs (equal or faster)"},
    {2048, 0, GemmKernel::kSm90Wide,
     "128×128 cooperative, overlapped promotion: faster than 128×192 at 20 of 24 shapes with "
     "M = 512–2048 (by up to 38 %: 512×8192×28672 187 vs 303 µs)"},
    {kAnyM, 8192, GemmKernel::kSm90Wide192,
     "M > 2048, N ≥ 8192: many waves of tiles, where 128×192's fewer shared-memory bytes per MAC "
     "win: 2–22 % faster at 6 of 10 shapes (8192×57344×8192 8476 → 6923 µs), equal at "
     "8192×10240×8192, 7–8 % slower at 4096×8192×8192 and 4096×10240×8192"},
    {kAnyM, 0, GemmKernel::kSm90Wide,
     "M > 2048, N ≤ 6144: 128×128 was faster at 5 of 6 shapes (4096×4096×14336 404 vs 481 µs)"},
};

// fp8 with fast accumulation (Fp8Accumulation::kFast, args.fp8_fast_accum):
// int8's table, plus one row. With one accumulator set fp8 runs on int8's
// tiles (sm90_configs.h: Fp8FastWide / Fp8FastSquare / Fp8FastNarrow behind
// kSm90Wide / kSm90Square / kSm90Narrow) with int8's registers, shared-memory
// bytes per MAC and wgmma rate, so int8's measured buckets apply; a sweep of
// five shapes (bench/results/gemm-h100-sweep-fp8fast.json) confirmed the
// 128×256 / 128×128 choices, and the fast 64×128 tile took M = 17..128 from
// 0.68–1.0× to 0.78–1.02× cuBLASLt fp8 (H100). M ≤ 16 runs the skinny
// kernel: mma.sync has no separate fast mode (each m16n8k32 returns its sum
// to an fp32 register every 32 products, finer than the precise wgmma
// mainloop's promotion), so that result is the precise one. So is the
// result at M = 129–256 with N < 6144, where the precise 64×128 ping-pong
// kernel (overlapped promotion) beats every fast tile.
constexpr GemmRule kSm90Fp8FastRules[] = {
    {16, 0, GemmKernel::kSkinny, "M ≤ 16 (decode): the skinny kernel, as for int8 (its result is the precise one)",
     false, true},
    {128, 0, GemmKernel::kSm90Narrow, "bandwidth-bound: fast 64×128 ping-pong, as for int8"},
    {256, 6144, GemmKernel::kSm90Square, "fast 128×128 ping-pong, as for int8"},
    {256, 0, GemmKernel::kSm90Square,
     "N < 6144: the precise 64×128 ping-pong (cluster 2×1) is faster than the fast 128×128 tile — "
     "H100, same call (bench/results/gemm-h100.json at 084ddbe): 256×4096×4096 14.8 vs 17.5 µs, "
     "256×4096×14336 34.3 vs 42.1 µs — so it runs, with its precise result",
     false, true},
    {512, 0, GemmKernel::kSm90Square, "fast 128×128 ping-pong, as for int8"},
    {1024, 0, GemmKernel::kSm90Square, "fast 128×128 ping-pong where 128×256 leaves a ragged last wave, as for int8",
     true},
    {kAnyM, 0, GemmKernel::kSm90Wide, "compute-bound: fast 128×256 cooperative, as for int8"},
};

// Ampere / Ada, int8 (sm_80 code; also what an sm_89 GPU runs for int8).
constexpr GemmRule kSm80Int8Rules[] = {
    {16, 0, GemmKernel::kSkinny, "weight-bandwidth-bound (see sm90)"},
    {128, 0, GemmKernel::kSm80Small, "64×128 tiles: twice the CTAs of 128×128 at small M"},
    {kAnyM, 0, GemmKernel::kSm80Large, "128×128×64, 3 stages: CUTLASS's best int8 tile on A100"},
};

// Ada, fp8 (sm_89): mma.sync e4m3 in the skinny kernel; no CUTLASS Ada
// kernel yet, so larger M runs on the fallback.
constexpr GemmRule kSm89Fp8Rules[] = {
    {64, 0, GemmKernel::kSkinny, "mma.sync e4m3 (sm_89+), bandwidth-bound"},
};

}  // namespace qgemm::detail
