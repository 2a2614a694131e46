// sm90_swapped.cuh — kSm90Swapped: M = 129–192 on Hopper with the operands
// swapped, Dᵀ = B·Aᵀ (Kernel<…, kSwapped>), so the tokens are the narrow
// side of the wgmma and no tile is mostly padding (sm90_configs.h,
// Swapped). Included only by sm90_swapped_*.cu.
//
// The token tile is M rounded up to 32 (160 or 192 columns): at M = 129–160
// the 64×160 tile, at 161–192 the 64×192 one. Whole tiles on CUTLASS's
// persistent scheduler: N/64 tiles fill the SMs from N = 8192 on, and no
// workspace is needed. Dᵀ is stored column-major through TMA, which is D
// row-major (the same bytes and alignment rules as the other TMA kernels).
#pragma once

#include "gemm/cuda/sm90_kernel.cuh"

namespace qgemm::detail::sm90 {

constexpr int64_t kSwappedMaxTokens = 192;

template <class Output>
bool run_swapped(const ScaledMmArgs& args, int sm_count) {
  if (args.m > kSwappedMaxTokens) return false;
  using Scheduler = cutlass::gemm::PersistentScheduler;
  if (args.input_dtype == DType::kInt8) {
    if (args.m <= 160) return Kernel<Swapped<160>, int8_t, Output, false, Scheduler, true>::run(args, sm_count);
    return Kernel<Swapped<192>, int8_t, Output, false, Scheduler, true>::run(args, sm_count);
  }
  using Fp8 = cutlass::float_e4m3_t;
  if (args.m <= 160) return Kernel<Fp8Swapped<160>, Fp8, Output, false, Scheduler, true>::run(args, sm_count);
  return Kernel<Fp8Swapped<192>, Fp8, Output, false, Scheduler, true>::run(args, sm_count);
}

}  // namespace qgemm::detail::sm90
