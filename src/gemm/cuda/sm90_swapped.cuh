// sm90_swapped.cuh — kSm90Swapped: M = 17–32 and 129–192 on Hopper with
// the operands swapped, Dᵀ = B·Aᵀ (Kernel<…, kSwapped>), so the tokens are
// the narrow side of the wgmma and no tile is mostly padding (sm90_configs.h,
// Swapped). Included only by sm90_swapped_*.cu.
//
// The token tile: 32 columns at M ≤ 32, 160 at M = 33–160 (the dispatch
// sends it 129–160), 192 at 161–192 — at most 31 columns of padding where
// the dispatch uses it. Whole tiles on CUTLASS's persistent scheduler: N/64
// tiles fill the SMs from N = 8192 on, and no workspace is needed. Dᵀ is
// stored column-major through TMA, which is D row-major (the same bytes and
// alignment rules as the other TMA kernels).
//
// kSm90SwappedHalves: the same tiles with M = 129–192 in two token tiles,
// 80 columns at M ≤ 160 and 96 above, so twice N/64 CTAs: where N/64 tiles
// leave most SMs idle (N = 2048–4224 on 132 SMs) the halves fill one wave,
// as cuBLASLt's fp8 kernels do there (64×72–96 tiles splitting M in two;
// docs/gemm.md, "M = 129–192 in two token tiles"). Their clusters pair the
// two halves of a channel tile, not two channel tiles (SwappedHalves,
// sm90_configs.h): the weight tile, not the token tile, is multicast.
#pragma once

#include "gemm/cuda/sm90_kernel.cuh"

namespace qgemm::detail::sm90 {

constexpr int64_t kSwappedMaxTokens = 192;

// One swapped tile width: the int8 config or the precise fp8 one (fast fp8
// runs precise), both Dᵀ = B·Aᵀ on the persistent scheduler.
template <template <int> class Int8Config, template <int> class Fp8Config, int kTokens, class Output>
bool run_swapped_config(const ScaledMmArgs& args, int sm_count) {
  using Scheduler = cutlass::gemm::PersistentScheduler;
  if (args.input_dtype == DType::kInt8) {
    return Kernel<Int8Config<kTokens>, int8_t, Output, false, Scheduler, true>::run(args, sm_count);
  }
  return Kernel<Fp8Config<kTokens>, cutlass::float_e4m3_t, Output, false, Scheduler, true>::run(args, sm_count);
}

template <class Output>
bool run_swapped(const ScaledMmArgs& args, int sm_count) {
  if (args.m > kSwappedMaxTokens) return false;
  if (args.m <= 32) return run_swapped_config<Swapped, Fp8Swapped, 32, Output>(args, sm_count);
  if (args.m <= 160) return run_swapped_config<Swapped, Fp8Swapped, 160, Output>(args, sm_count);
  return run_swapped_config<Swapped, Fp8Swapped, 192, Output>(args, sm_count);
}

template <class Output>
bool run_swapped_halves(const ScaledMmArgs& args, int sm_count) {
  if (args.m <= 128 || args.m > kSwappedMaxTokens) return false;
  return args.m <= 160 ? run_swapped_config<SwappedHalves, Fp8SwappedHalves, 80, Output>(args, sm_count)
                       : run_swapped_config<SwappedHalves, Fp8SwappedHalves, 96, Output>(args, sm_count);
}

}  // namespace qgemm::detail::sm90
