// decode_wgmma_plan.h — the host arithmetic of the fp8 wgmma decode kernel
// (sm90_decode_wgmma.cu): its tile, how many CTAs of a cluster split K, and
// where the dispatch table sends it. Apart from the kernel so that host
// tests check it without a GPU (test_gemm_dispatch_table.cpp).
#pragma once

#include <algorithm>
#include <cstdint>

namespace qgemm::detail {

constexpr int64_t kDecodeWgmmaRows = 64;      // weight rows per tile
constexpr int64_t kDecodeWgmmaStageK = 128;   // K bytes per pipeline stage
constexpr int kDecodeWgmmaCtasPerSm = 2;      // 80 KB of stages each
constexpr int64_t kDecodeWgmmaMinStages = 8;  // per split: 1 KB of K

constexpr int64_t decode_wgmma_tiles(int64_t n) { return (n + kDecodeWgmmaRows - 1) / kDecodeWgmmaRows; }

// K split over a cluster: doubled (up to `max_cluster`, at most 8) while the
// CTAs stay at most one per SM and every split keeps kDecodeWgmmaMinStages
// stages. H200, fp8 M = 1 and 16, against one split of 80 KB CTAs at two
// per SM forced in the same process: 4096×4096 (64 tiles) 14.7 → 11.2 µs at
// two splits, 4096×14336 26.7 → 21.5 (bench/results/gemm-h200-decode-wgmma-
// prototype.txt, the prototype's four-way split against this rule).
constexpr int decode_wgmma_splits(int64_t n, int64_t k, int sm_count, int max_cluster) {
  const int64_t tiles = decode_wgmma_tiles(n);
  const int64_t stages = (k + kDecodeWgmmaStageK - 1) / kDecodeWgmmaStageK;
  int splits = 1;
  while (splits * 2 <= std::min(max_cluster, 8) && tiles * splits * 2 <= sm_count &&
         stages >= kDecodeWgmmaMinStages * splits * 2) {
    splits *= 2;
  }
  return splits;
}

// Where the dispatch table runs it (fp8, M = 9–16): its tiles all resident
// at once (N ≤ 16896 on 132 SMs). Beyond that a second round of tiles costs
// it more than the other decode kernel's persistent CTAs (16×28672×4096:
// 37.2 against 37.7 µs at 1.7 rounds, 0.90× at 3.4).
constexpr bool decode_wgmma_fits_one_wave(int64_t n, int sm_count) {
  return decode_wgmma_tiles(n) <= int64_t{kDecodeWgmmaCtasPerSm} * sm_count;
}

}  // namespace qgemm::detail
