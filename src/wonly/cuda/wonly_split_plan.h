// wonly_split_plan.h — the host side of wonly_split_k.cuh: how many CTAs of
// one cluster split K for each output tile. Apart from the device code so
// that host tests can check it.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/cluster_split.h"
#include "core/cuda_kernel_info.h"

namespace qgemm::detail::wonly {

// The split doubled while the `ctas` of the grid times the doubled split stay
// ≤ cta_cap and every split keeps ≥ min_units of K work, up to the largest
// cluster the kernel can be resident in (info.max_cluster: 8, the portable
// size, on a whole H100; less on a GPU partition, where a larger cluster
// would not launch); 1 when the loaded code was not compiled for sm_90+ (no
// cluster reduction in it).
inline int doubled_split(const KernelInfo& info, int64_t ctas, int64_t k_units, int64_t min_units,
                         int64_t cta_cap) {
  if (info.arch < 90) return 1;
  return doubled_cluster_split(info.max_cluster, ctas, k_units, min_units, cta_cap);
}

// The decode and mma.sync kernels' split: doubled while the grid fills at
// most half of the kernel's resident CTAs.
inline int split_k_factor(const KernelInfo& info, int64_t ctas, int64_t k_units, int64_t min_units) {
  return doubled_split(info, ctas, k_units, min_units, info.resident_ctas);
}

// The wgmma kernel's split (wonly_wgmma.cu): doubled while the CTAs still
// number at most one per SM (`sm_count`); where the tiles alone leave that
// at 1, still 2 if the doubled grid stays resident at once (split_k_factor's
// bound). More CTAs than SMs made the split slower even where they were all
// resident — H100, W4A16 bf16, µs by splits 1 / 2 / 4 / 8 (a scratch build
// forcing the split, one call): M = 128 on (4096, 4096), 64 tiles: 35.7 /
// 23.9 / 33.7 / 38.6 (split_k_factor took 4); M = 64 on (8192, 4096), 64
// tiles: 35.9 / 25.3 / 34.5 / 39.6 (it took 4); M = 64 on (4096, 4096), 32
// tiles: 35.6 / 23.5 / 23.2 / 27.0 (it took 8); M = 256 on (4096, 11008),
// 128 tiles: 83.0 / 73.3 / 100 / 104.
inline int split_k_factor_one_per_sm(const KernelInfo& info, int sm_count, int64_t ctas, int64_t k_units,
                                     int64_t min_units) {
  const int spread = doubled_split(info, ctas, k_units, min_units, sm_count);
  return spread > 1 ? spread : std::min(2, split_k_factor(info, ctas, k_units, min_units));
}

}  // namespace qgemm::detail::wonly
