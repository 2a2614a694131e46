// wonly_stream_k.h — stream-K for the wgmma weight-only kernel
// (wonly_wgmma.cu): when the output tiles split unevenly over the CTAs that
// fit on the GPU at once (224 tiles on 132 SMs take two rounds of one tile
// each, 1.7 tiles of work), every resident CTA instead takes an equal,
// contiguous run of the problem's k-tile iterations, walked tile after tile
// (iteration i = tile·k_tiles + kt; tiles in the kernels' band order). Small
// grids (at most SMs/4 tiles) use it in place of a cluster split.
//
// A tile whose iterations are cut between CTAs c0 < c1 < … < cj is finished
// by cj, the CTA holding its last k tile (its "owner"): each CTA walks its
// run backwards, tile by tile, so a non-owner part is always the first thing
// a CTA computes — it stores its fp32 partial sums in its own workspace slot
// and raises its flag — and the owner's part is the last. The owner waits for
// the flags of c0 … cj−1, adds their partial sums to its own in that order
// (a fixed order: the result is the same from run to run) and runs the usual
// epilogue. (Starting the owner's part from the partial sums instead made
// ptxas serialize the wgmmas (C7515) and the calls 16–50 % slower; pulling
// the slots into L2 ahead of the adds changed nothing measurable.) Waiting
// is safe because every CTA of the grid is resident at once (ctas ≤ the
// kernel's resident CTAs) and a non-owner part never waits.
//
// Workspace (the caller's, weight_only_mm's `workspace`): flags [ctas] int32,
// zeroed on the stream before each launch (one cudaMemsetAsync, so a
// workspace needs no initialization and survives an aborted call), then the
// partial slots at a 256-byte offset: [ctas][regs][256 threads] fp32, regs =
// the kernel's accumulator registers per thread (kBM / 2).
#pragma once

#include <cstdint>

#include "core/numeric.h"

namespace qgemm::detail::wonly {

struct StreamKPlan {
  int ctas = 0;        // 0: a data-parallel launch (one tile per CTA, or a cluster split)
  int k_tiles = 0;     // per output tile
  int64_t tiles_x = 0;  // token tiles
  int64_t tiles_y = 0;  // row tiles
  int* flags = nullptr;
  float* partials = nullptr;

  QGEMM_HD int64_t iterations() const { return tiles_x * tiles_y * k_tiles; }
  // The first iteration of CTA c (c = ctas: the end).
  QGEMM_HD int64_t begin(int64_t c) const { return iterations() * c / ctas; }
  // The CTA whose run holds iteration i (the largest c with begin(c) <= i).
  QGEMM_HD int64_t cta_of(int64_t i) const { return ((i + 1) * ctas + iterations() - 1) / iterations() - 1; }
};


// One CTA's accumulators (256 threads × kBM/2 fp32): a partial slot.
constexpr int64_t stream_k_partial_bytes(int block_m) { return int64_t{block_m / 2} * 256 * 4; }

// Flags, then the partial slots (256-byte aligned).
inline int64_t stream_k_flag_bytes(int64_t ctas) { return (ctas * 4 + 255) / 256 * 256; }
inline int64_t stream_k_workspace_bytes(int64_t ctas, int64_t partial_bytes_per_cta) {
  return stream_k_flag_bytes(ctas) + ctas * partial_bytes_per_cta;
}

// The CTAs of a stream-K launch, or 0 for the data-parallel one: stream-K
// when the busiest data-parallel CTA would run at least 10 % more k tiles
// than an equal share (ceil(tiles / slots) whole tiles against
// tiles·k_tiles / slots), every share keeps ≥ min_share k tiles, and the
// workspace holds the slots' partial sums. `slots`: the kernel's resident CTAs.
inline int stream_k_ctas(int64_t tiles, int64_t k_tiles, int64_t slots, int64_t min_share,
                         int64_t partial_bytes_per_cta, int64_t workspace_bytes) {
  if (slots < 2 || tiles < 1) return 0;
  const int64_t rounds = (tiles + slots - 1) / slots;
  const int64_t share = (tiles * k_tiles + slots - 1) / slots;
  if (share < min_share || share * 10 > rounds * k_tiles * 9) return 0;
  if (stream_k_workspace_bytes(slots, partial_bytes_per_cta) > workspace_bytes) return 0;
  return static_cast<int>(slots);
}

// The grids a cluster split of 4 or more would serve (at most SMs/4 CTAs,
// e.g. M ≤ 64 on N = 4096: 32 tiles): stream-K over one CTA per SM, or 0
// where the shares would be under min_share k tiles or the workspace is too
// small. H100, W4A16 g128 / W8A16, µs, the cluster split against this
// (bench/results/wonly-h100-stream-k-small-grids.json, two rounds):
// (N, K) = (4096, 11008) M = 64 40.9 → 34.0 / 45.4 → 36.5, (4096, 14336)
// 49.7 → 39.8 / 56.9 → 42.5, (4096, 4096) 22.4 → 21.3 / 23.9 → 21.9;
// (2048, 8192) within ±4 %. Over the two-per-SM slots, and for cluster
// splits of 2 (34–66 tiles), it was as often slower (up to 14 %) as faster.
inline int stream_k_ctas_small_grid(int64_t k_tiles, int64_t tiles, int64_t sm_count, int64_t min_share,
                                    int64_t partial_bytes_per_cta, int64_t workspace_bytes) {
  if (sm_count < 2 || tiles * k_tiles < min_share * sm_count) return 0;
  if (stream_k_workspace_bytes(sm_count, partial_bytes_per_cta) > workspace_bytes) return 0;
  return static_cast<int>(sm_count);
}

}  // namespace qgemm::detail::wonly
