// wonly_split_plan.h — the host side of wonly_split_k.cuh: how many CTAs of
// one cluster split K for each output tile. Apart from the device code so
// that host tests can check it.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/cuda_kernel_info.h"

namespace qgemm::detail::wonly {

// Doubled while the grid (`ctas`) fills at most half of the kernel's resident
// CTAs and every split keeps ≥ min_units of K work, up to the largest cluster
// the kernel can be resident in (info.max_cluster: 8, the portable size, on a
// whole H100; less on a GPU partition, where a larger cluster would not
// launch); 1 when the loaded code was not compiled for sm_90+ (no cluster
// reduction in it).
inline int split_k_factor(const KernelInfo& info, int64_t ctas, int64_t k_units, int64_t min_units) {
  if (info.arch < 90) return 1;
  int splits = 1;
  while (splits * 2 <= std::min(info.max_cluster, 8) && ctas * splits * 2 <= info.resident_ctas &&
         k_units >= min_units * splits * 2) {
    splits *= 2;
  }
  return splits;
}

}  // namespace qgemm::detail::wonly
