// sm90_tile_swizzle.h — the Hopper kernels' tile-scheduler swizzle, a
// kernel argument (not an instantiation). Its own header so that the CUTLASS
// translation units (sm90_kernel.cuh) do not depend on the dispatch table.
#pragma once

#include <cstdint>

namespace qgemm::detail {

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

}  // namespace qgemm::detail
