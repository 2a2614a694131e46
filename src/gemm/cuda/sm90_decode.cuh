// sm90_decode.cuh — kSm90Decode: M ≤ 16 (decode) on Hopper's wgmma with the
// operands swapped, on CUTLASS's stream-K scheduler. Included only by
// sm90_decode_*.cu.
//
// A wgmma is 64 rows tall but can be 8 or 16 columns wide, so a decode GEMM
// runs as Dᵀ = B·Aᵀ (Kernel<…, kSwapped>): the weight's N channels fill the
// rows of 128-row tiles, the M ≤ 16 tokens one 16-column tile, and Dᵀ is
// stored column-major — the bytes of D row-major. TMA streams the weight
// into a ring of 12 stages; the 8-bit operands feed the tensor cores as
// they are (mma.sync on sm_90 has no e4m3 form: kSm90SkinnyStream converts
// every fp8 word to f16 first). Whole tiles would leave most SMs idle (N =
// 4096 is 32 tiles), so CUTLASS's stream-K scheduler, in its heuristic
// mode, cuts the tiles of the last waves along K (stream-K, or split-K
// where the CTAs are a multiple of the tiles), and the peers of a cut tile
// meet in the workspace as in sm90_stream_k.cuh. Without that workspace the
// kernel declines. Of the scheduler's modes, forced in one call on the H200
// (bench/results/gemm-h200-decode-swapped-modes.json), the heuristic one was
// within 1.5 % of the fastest at every shape; stream-K cut every tile of
// N = 28672 (two waves) and ran 6 % slower there, data-parallel left N =
// 8192 on 64 of 132 SMs (1×8192×28672 78 µs against 65).
#pragma once

#include "gemm/cuda/sm90_kernel.cuh"

namespace qgemm::detail::sm90 {

template <class Input, class Output>
bool run_decode_config(const ScaledMmArgs& args, int sm_count) {
  using DecodeKernel = Kernel<Decode, Input, Output, false, cutlass::gemm::StreamKScheduler, true>;
  using Params = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90StreamKParams;
  if (args.m > 16 || args.workspace == nullptr) return false;
  auto arguments = DecodeKernel::arguments(args, sm_count);
  arguments.scheduler.max_swizzle_size = 1;
  arguments.scheduler.decomposition_mode = Params::DecompositionMode::Heuristic;
  // int8's int32 partial sums add exactly in any order; fp8's fp32 ones in
  // k order, so that a call gives the same bits on every run.
  arguments.scheduler.reduction_mode = std::is_same_v<Input, int8_t> ? Params::ReductionMode::Nondeterministic
                                                                     : Params::ReductionMode::Deterministic;
  if (DecodeKernel::Gemm::get_workspace_size(arguments) > static_cast<size_t>(args.workspace_bytes)) return false;
  return DecodeKernel::launch(arguments, args.workspace, args);
}

// The decode kernel for the call's input: int8, or precise fp8 (fast fp8
// runs it too: with one k-tile per promotion it loses nothing).
template <class Output>
bool run_decode(const ScaledMmArgs& args, int sm_count) {
  if (args.input_dtype == DType::kInt8) return run_decode_config<int8_t, Output>(args, sm_count);
  return run_decode_config<cutlass::float_e4m3_t, Output>(args, sm_count);
}

}  // namespace qgemm::detail::sm90
