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
// int8's 80 columns at M ≤ 160 and 96 above, fp8's 72–96 as M needs
// (with_int8_token_width, with_fp8_token_width), so twice N/64 CTAs: where N/64 tiles
// leave most SMs idle (N = 2048–4224 on 132 SMs) the halves fill one wave,
// as cuBLASLt's fp8 kernels do there (64×72–96 tiles splitting M in two;
// docs/gemm.md, "M = 129–192 in two token tiles"). Their clusters pair the
// two halves of a channel tile, not two channel tiles (SwappedHalves,
// sm90_configs.h): the weight tile, not the token tile, is multicast.
#pragma once

#include <type_traits>

#include "gemm/cuda/sm90_kernel.cuh"
#include "gemm/cuda/tile_waves.h"  // swapped_halves_take_m, swapped_halves_token_tiles

namespace qgemm::detail::sm90 {

constexpr int64_t kSwappedMaxTokens = 192;

// One swapped tile, Dᵀ = B·Aᵀ on the persistent scheduler.
template <class Config, class Input, class Output>
bool run_swapped_tile(const ScaledMmArgs& args, int sm_count) {
  return Kernel<Config, Input, Output, false, cutlass::gemm::PersistentScheduler, true>::run(args, sm_count);
}

// One swapped tile width: the int8 config or the precise fp8 one (fast fp8
// runs precise).
template <template <int> class Int8Config, template <int> class Fp8Config, int kTokens, class Output>
bool run_swapped_config(const ScaledMmArgs& args, int sm_count) {
  if (args.input_dtype == DType::kInt8) return run_swapped_tile<Int8Config<kTokens>, int8_t, Output>(args, sm_count);
  return run_swapped_tile<Fp8Config<kTokens>, cutlass::float_e4m3_t, Output>(args, sm_count);
}

template <class Output>
bool run_swapped(const ScaledMmArgs& args, int sm_count) {
  if (args.m > kSwappedMaxTokens) return false;
  if (args.m <= 32) return run_swapped_config<Swapped, Fp8Swapped, 32, Output>(args, sm_count);
  if (args.m <= 160) return run_swapped_config<Swapped, Fp8Swapped, 160, Output>(args, sm_count);
  return run_swapped_config<Swapped, Fp8Swapped, 192, Output>(args, sm_count);
}

// The token width for M in `parts` token tiles, passed to run as
// std::integral_constant<int, width>: the token halves below and the token
// tiles of sm90_swapped_stream_k.cuh.
//   - Precise fp8 (fast fp8 runs precise): the narrowest multiple of 8 that
//     holds M, 8·⌈M / (8 · parts)⌉ (72, 80, 88 or 96 where the callers use
//     it), so that the last token box reaches at most 8·parts − 1 rows past
//     M. Past that the halves slowed in steps of 8 rows, in proportion to K
//     (64×80 tiles at 4096×14336: M = 152–160 23.5 µs, 144–148 24.7,
//     136–140 26.7, 129–132 29.0; 64×72 ones 24.5–24.7 at M = 129–144;
//     docs/gemm.md, "The token halves fitted to M").
//   - int8: 80 where 80 per tile hold M, else 96. Its wgmma has no N = 72 or
//     88 (CUTLASS falls back to three N = 24 atoms per k-step: 1.07× the
//     time, geomean over M = 129–144).
template <class Run>
bool with_fp8_token_width(int64_t m, int64_t parts, Run run) {
  switch ((m + 8 * parts - 1) / (8 * parts)) {
    case 9: return run(std::integral_constant<int, 72>{});
    case 10: return run(std::integral_constant<int, 80>{});
    case 11: return run(std::integral_constant<int, 88>{});
    default: return run(std::integral_constant<int, 96>{});
  }
}
template <class Run>
bool with_int8_token_width(int64_t m, int64_t parts, Run run) {
  if (m <= 80 * parts) return run(std::integral_constant<int, 80>{});
  return run(std::integral_constant<int, 96>{});
}

// The halves at M = 129–192 and the same tiles at M = 257–384 in four token
// tiles ("the 64-channel quarters", swapped_halves_quarters_take in
// tile_waves.h); the clusters of 1×2 pair token tiles 0–1 (and 2–3) of a
// channel tile.
template <class Output>
bool run_swapped_halves(const ScaledMmArgs& args, int sm_count) {
  if (!swapped_halves_take_m(args.m)) return false;
  const int64_t tiles = swapped_halves_token_tiles(args.m);
  if (args.input_dtype == DType::kInt8) {
    return with_int8_token_width(args.m, tiles, [&](auto tokens) {
      return run_swapped_tile<SwappedHalves<decltype(tokens)::value>, int8_t, Output>(args, sm_count);
    });
  }
  return with_fp8_token_width(args.m, tiles, [&](auto tokens) {
    return run_swapped_tile<Fp8SwappedHalves<decltype(tokens)::value>, cutlass::float_e4m3_t, Output>(args, sm_count);
  });
}

}  // namespace qgemm::detail::sm90
