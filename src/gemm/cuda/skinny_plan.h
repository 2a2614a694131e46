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

// Where each plan's persistent workers fit: `deep` CTAs of kDeep, and
// wide[s] clusters of s kWide CTAs (wide[1]: CTAs) resident at once — from
// the occupancy API, since a cluster's CTAs must share one GPC (0: that
// cluster cannot launch, e.g. code compiled below sm_90).
struct SkinnySlots {
  int64_t deep = 0;
  int64_t wide[kSkinnyMaxSplits + 1] = {};
};

// The plan with the highest modeled throughput (shape rate × balance of the
// tiles over the workers that fit), preferring kWide and fewer splits: a
// plan must beat the best so far by 2 %. `k_chunks`: 64-element chunks per
// column (ceil(K / 64)). E.g. 132 SMs, 132 resident clusters of 3: N = 8192
// (512 tiles), K = 8192: wide with 3 splits, 4 rounds of tiles (0.97 busy),
// where unsplit wide takes 2 rounds on 396 CTAs (0.65) and deep 2 on 264
// (0.97 × 0.8).
constexpr SkinnyDecodePlan plan_skinny_decode(int64_t tiles, int64_t k_chunks, const SkinnySlots& slots) {
  SkinnyDecodePlan best{SkinnyShape::kWide, 1};
  double best_score = skinny_balance(tiles, slots.wide[1]);
  const double deep = kSkinnyDeepRate * skinny_balance(tiles, slots.deep);
  if (deep > best_score * 1.02) {
    best = {SkinnyShape::kDeep, 1};
    best_score = deep;
  }
  for (int splits = 2; splits <= kSkinnyMaxSplits; ++splits) {
    if (k_chunks < kSkinnyMinChunksPerWarp * 8 * splits) break;
    const double score = skinny_balance(tiles, slots.wide[splits]);
    if (score > best_score * 1.02) {
      best = {SkinnyShape::kWide, splits};
      best_score = score;
    }
  }
  return best;
}

// The SkinnySlots of the decode kernel for int8 or fp8 (`fp8`) inputs on
// `device` (skinny_gemm.cu; cached occupancy queries).
SkinnySlots skinny_decode_slots(bool fp8, int device);

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
