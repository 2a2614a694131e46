// decode_wgmma_plan.h — the host arithmetic of the fp8 wgmma decode kernel
// (sm90_decode_wgmma.cu): its tile, how many CTAs of a cluster split K, and
// where the dispatch table sends it. Apart from the kernel so that host
// tests check it without a GPU (test_gemm_dispatch_table.cpp).
#pragma once

#include <cstdint>

#include "core/cluster_split.h"

namespace qgemm::detail {

constexpr int64_t kDecodeWgmmaRows = 64;      // weight rows per tile
constexpr int64_t kDecodeWgmmaStageK = 128;   // K bytes per pipeline stage
constexpr int kDecodeWgmmaCtasPerSm = 2;      // 80 KB of stages each
constexpr int64_t kDecodeWgmmaMinStages = 8;  // per split: 1 KB of K

constexpr int64_t decode_wgmma_tiles(int64_t n) { return (n + kDecodeWgmmaRows - 1) / kDecodeWgmmaRows; }

// K split over a cluster (doubled_cluster_split): doubled (up to
// `max_cluster`, at most 8) while the CTAs stay at most one per SM and every
// split keeps kDecodeWgmmaMinStages stages. H200, fp8 M = 1 and 16, against
// one split of 80 KB CTAs at two per SM forced in the same process:
// 4096×4096 (64 tiles) 14.7 → 11.2 µs at two splits, 4096×14336 26.7 → 21.5
// (bench/results/gemm-h200-decode-wgmma-prototype.txt, the prototype's
// four-way split against this rule).
constexpr int decode_wgmma_splits(int64_t n, int64_t k, int sm_count, int max_cluster) {
  const int64_t stages = (k + kDecodeWgmmaStageK - 1) / kDecodeWgmmaStageK;
  return doubled_cluster_split(max_cluster, decode_wgmma_tiles(n), stages, kDecodeWgmmaMinStages, sm_count);
}

// Where the dispatch table runs it (fp8, M = 9–16): from nine tenths of a
// tile per SM to two (N = 7604–16896 on 132 SMs). H200, forced against
// kSm90SkinnyStream in one call, M = 9 / 12 / 16
// (bench/results/gemm-h200-decode-wgmma-ab.json): 8192×8192 (128 tiles)
// 1.01 / 1.01 / 1.02×, 10240×8192 1.08 / 1.08 / 1.07×, 14336×4096 1.08 /
// 1.10 / 1.10×, 8192×28672 1.03 / 1.04 / 1.05×. With fewer tiles its one
// consumer warpgroup per CTA leaves SMs idle where the skinny kernel's
// persistent 16-row tiles spread over all of them (4096×4096, 64 tiles split
// in two: 0.92–0.97×; 6144×4096, 96 tiles: 0.99–1.01×); with more, a second
// round of tiles costs it more than the skinny kernel's (28672×4096, 448
// tiles: 0.95–0.97×).
constexpr bool decode_wgmma_fills_the_gpu(int64_t n, int sm_count) {
  const int64_t tiles = decode_wgmma_tiles(n);
  return 10 * tiles >= 9 * int64_t{sm_count} && tiles <= int64_t{kDecodeWgmmaCtasPerSm} * sm_count;
}

}  // namespace qgemm::detail
