// sm90_swapped_stream_k.cuh — the swapped kernels on CUTLASS's stream-K
// scheduler: kSm90Decode (M ≤ 16, sm90_decode.cuh), kSm90SwappedStreamK
// (M = 129–192 on weights whose 64-channel tiles leave SMs idle, and M =
// 193–768 in three to eight token tiles where those fit one wave) and
// kSm90SwappedHalvesStreamK (M = 129–192 in two token tiles on long K, N =
// 2048–4224). Included only by sm90_decode_*.cu, sm90_swapped_streamk_*.cu
// and sm90_swapped_halves_streamk_*.cu.
//
// Dᵀ = B·Aᵀ (Kernel<…, kSwapped>): the weight's channels are the rows of
// 128-row cooperative tiles, the tokens their columns, Dᵀ stored column-major
// (D row-major). Whole tiles would leave most SMs idle (N = 4096 is 32
// tiles), so the scheduler, in its heuristic mode, cuts the tiles of the last
// waves along K (stream-K, or split-K where the CTAs are a multiple of the
// tiles), and the peers of a cut tile meet in the call's workspace as in
// sm90_stream_k.cuh. Without that workspace, or with too small a one, the
// kernel declines (false) and the dispatcher runs another.
#pragma once

#include "gemm/cuda/sm90_kernel.cuh"
#include "gemm/cuda/sm90_swapped.cuh"  // kSwappedMaxTokens, with_int8_token_width, with_fp8_token_width
#include "gemm/cuda/tile_waves.h"     // kSwappedTokenTilesMaxM, swapped_token_tiles

namespace qgemm::detail::sm90 {

template <class Config, class Input, class Output>
bool run_swapped_stream_k_config(const ScaledMmArgs& args, int sm_count) {
  using SwappedKernel = Kernel<Config, Input, Output, false, cutlass::gemm::StreamKScheduler, true>;
  using Params = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90StreamKParams;
  if (args.workspace == nullptr) return false;
  auto arguments = SwappedKernel::arguments(args, sm_count);
  arguments.scheduler.max_swizzle_size = 1;
  arguments.scheduler.decomposition_mode = Params::DecompositionMode::Heuristic;
  // int8's int32 partial sums add exactly in any order; fp8's fp32 ones in
  // k order, so that a call gives the same bits on every run.
  arguments.scheduler.reduction_mode = std::is_same_v<Input, int8_t> ? Params::ReductionMode::Nondeterministic
                                                                     : Params::ReductionMode::Deterministic;
  if (SwappedKernel::Gemm::get_workspace_size(arguments) > static_cast<size_t>(args.workspace_bytes)) return false;
  return SwappedKernel::launch(arguments, args.workspace, args);
}

// One swapped stream-K tile width for the call's input: the int8 config or
// the precise fp8 one (fast fp8 runs precise, as on kSm90Swapped).
template <template <int> class Int8Config, template <int> class Fp8Config, int kTokens, class Output>
bool run_swapped_stream_k_tile(const ScaledMmArgs& args, int sm_count) {
  if (args.input_dtype == DType::kInt8) {
    return run_swapped_stream_k_config<Int8Config<kTokens>, int8_t, Output>(args, sm_count);
  }
  return run_swapped_stream_k_config<Fp8Config<kTokens>, cutlass::float_e4m3_t, Output>(args, sm_count);
}

// kSm90SwappedStreamK at M = 193–768: the tokens in three tiles up to M =
// 256 ("thirds"), four up to 384 ("quarters"), ⌈M/96⌉ above, and three at
// M = 257–288 where four would not fit one wave (swapped_token_tiles,
// tile_waves.h, which the dispatch reads too); int8 80 or 96 columns,
// precise fp8 8·⌈M / (8·tiles)⌉ = 72–96 (with_int8_token_width,
// with_fp8_token_width in sm90_swapped.cuh; Fp8SwappedTokenTiles,
// sm90_configs.h; docs/gemm.md, "M = 193–768: the swapped stream-K tiles in
// three to eight token tiles").
template <class Output>
bool run_swapped_token_tiles_stream_k(const ScaledMmArgs& args, int sm_count) {
  const int64_t tiles = swapped_token_tiles(args.m, args.n, sm_count);
  if (args.input_dtype == DType::kInt8) {
    return with_int8_token_width(args.m, tiles, [&](auto tokens) {
      return run_swapped_stream_k_config<SwappedStreamK<decltype(tokens)::value>, int8_t, Output>(args, sm_count);
    });
  }
  return with_fp8_token_width(args.m, tiles, [&](auto tokens) {
    return run_swapped_stream_k_config<Fp8SwappedTokenTiles<decltype(tokens)::value>, cutlass::float_e4m3_t, Output>(
        args, sm_count);
  });
}

// kSm90SwappedStreamK: 160 token columns up to M = 160, 192 up to 192, the
// token tiles above; false with M > 768.
template <class Output>
bool run_swapped_stream_k(const ScaledMmArgs& args, int sm_count) {
  if (args.m > kSwappedTokenTilesMaxM) return false;
  if (args.m > kSwappedMaxTokens) return run_swapped_token_tiles_stream_k<Output>(args, sm_count);
  if (args.m <= 160) return run_swapped_stream_k_tile<SwappedStreamK, Fp8SwappedStreamK, 160, Output>(args, sm_count);
  return run_swapped_stream_k_tile<SwappedStreamK, Fp8SwappedStreamK, 192, Output>(args, sm_count);
}

// kSm90SwappedHalvesStreamK: M = 129–192 in two token tiles, 80 columns at
// M ≤ 160 and 96 above (as kSm90SwappedHalves); false outside 129–192.
template <class Output>
bool run_swapped_halves_stream_k(const ScaledMmArgs& args, int sm_count) {
  if (args.m <= 128 || args.m > kSwappedMaxTokens) return false;
  if (args.m <= 160) {
    return run_swapped_stream_k_tile<SwappedHalvesStreamK, Fp8SwappedHalvesStreamK, 80, Output>(args, sm_count);
  }
  return run_swapped_stream_k_tile<SwappedHalvesStreamK, Fp8SwappedHalvesStreamK, 96, Output>(args, sm_count);
}

}  // namespace qgemm::detail::sm90
