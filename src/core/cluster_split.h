// cluster_split.h — how many CTAs of one thread-block cluster split a tile's
// K: the rule the kernels that reduce their K splits through distributed
// shared memory share (the weight-only decode and tensor-core kernels,
// wonly_split_plan.h; the fp8 wgmma decode kernel, decode_wgmma_plan.h).
// Host arithmetic, apart from the kernels so that host tests check it.
#pragma once

#include <algorithm>
#include <cstdint>

namespace qgemm::detail {

// The split doubled while it stays within `max_cluster` (and 8, the portable
// cluster size), the grid's `ctas` times the doubled split stay ≤ `cta_cap`,
// and every split keeps ≥ `min_units` of the `k_units` of K work.
constexpr int doubled_cluster_split(int max_cluster, int64_t ctas, int64_t k_units, int64_t min_units,
                                    int64_t cta_cap) {
  int splits = 1;
  while (splits * 2 <= std::min(max_cluster, 8) && ctas * splits * 2 <= cta_cap && k_units >= min_units * splits * 2) {
    splits *= 2;
  }
  return splits;
}

}  // namespace qgemm::detail
