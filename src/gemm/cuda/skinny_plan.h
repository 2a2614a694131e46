// skinny_plan.h — how the skinny scaled GEMM (skinny_gemm.cu) launches for
// M ≤ 16: which of its two persistent decode shapes, and how many CTAs of a
// thread-block cluster split K for each 16-column tile. Host-only and
// constexpr, apart from the kernel, so that the GPU-free tests check it
// (tests/gemm/test_gemm_dispatch_table.cpp).
#pragma once

#include <cstdint>

namespace qgemm::detail {

// The decode kernel's two shapes, both 8 warps over 16-column tiles:
//   kWide: 2 K chunks in flight per warp, ≤ 80 registers, 3 CTAs per SM —
//          streams best (85 % of copy bandwidth at 1×28672×4096);
//   kDeep: 4 chunks in flight, 2 CTAs per SM — about 0.8× kWide's rate per
//          busy CTA slot, but fewer slots to deal the tiles to.
enum class SkinnyShape : uint8_t { kWide, kDeep };

struct SkinnyDecodePlan {
  SkinnyShape shape = SkinnyShape::kWide;
  int splits = 1;  // CTAs of one cluster that split each tile's K (grid z)
};

// kDeep's streaming rate relative to kWide's, per busy slot (H100, docs/gemm.md).
constexpr double kSkinnyDeepRate = 0.8;
// Each split keeps at least this many 64-element K chunks per warp (8 warps),
// so that a tile's loads in flight and its reduction stay amortized.
constexpr int64_t kSkinnyMinChunksPerWarp = 4;
// The largest split tried: one cluster per SM at kWide's 3 CTAs per SM.
constexpr int kSkinnyMaxSplits = 4;

// The fraction of the persistent workers' time that is busy when `tiles`
// equal tiles are dealt round-robin to `workers`: tiles over (workers ×
// the most tiles any worker gets); 1 when every worker gets the same.
constexpr double skinny_balance(int64_t tiles, int64_t workers) {
  if (workers <= 0 || tiles <= 0) return 0.0;
  const int64_t most = (tiles + workers - 1) / workers;
  return static_cast<double>(tiles) / static_cast<double>(workers * most);
}

// The plan with the highest modeled throughput (shape rate × balance of the
// tiles over the clusters that fit), preferring kWide and fewer splits on a
// tie (within 2 %). `wide_slots` / `deep_slots`: each shape's resident CTAs
// on the device; `k_chunks`: 64-element chunks per column (ceil(K / 64));
// `max_cluster`: the largest cluster the kernel can launch with (1: no
// split, e.g. code compiled below sm_90). E.g. 132 SMs (396 wide / 264 deep
// slots): N = 8192 (512 tiles) and K = 8192: wide with 3 splits — 132
// clusters take 4 rounds of tiles (0.97 busy) where unsplit wide takes 2 of
// 396 (0.65) and deep 2 of 264 (0.97 × 0.8).
constexpr SkinnyDecodePlan plan_skinny_decode(int64_t tiles, int64_t k_chunks, int64_t wide_slots,
                                              int64_t deep_slots, int max_cluster) {
  SkinnyDecodePlan best{SkinnyShape::kWide, 1};
  double best_score = skinny_balance(tiles, wide_slots);
  const double deep = kSkinnyDeepRate * skinny_balance(tiles, deep_slots);
  if (deep > best_score * 1.02) {
    best = {SkinnyShape::kDeep, 1};
    best_score = deep;
  }
  for (int splits = 2; splits <= kSkinnyMaxSplits && splits <= max_cluster; ++splits) {
    if (k_chunks < kSkinnyMinChunksPerWarp * 8 * splits) break;
    const double score = skinny_balance(tiles, wide_slots / splits);
    if (score > best_score * 1.02) {
      best = {SkinnyShape::kWide, splits};
      best_score = score;
    }
  }
  return best;
}

// Forces the decode plan of every M ≤ 16 skinny launch on this thread while
// it lives (`qgemm bench gemm --sweep`, tests): splits must be 1 … 8 and
// within the kernel's largest cluster (else scaled_mm throws).
class SkinnyDecodeOverride {
 public:
  explicit SkinnyDecodeOverride(SkinnyDecodePlan plan);
  ~SkinnyDecodeOverride();
  SkinnyDecodeOverride(const SkinnyDecodeOverride&) = delete;
  SkinnyDecodeOverride& operator=(const SkinnyDecodeOverride&) = delete;

 private:
  bool had_previous_;
  SkinnyDecodePlan previous_;
};

}  // namespace qgemm::detail
