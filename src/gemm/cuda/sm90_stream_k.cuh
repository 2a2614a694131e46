// sm90_stream_k.cuh — kSm90StreamK: Wide1x2's 128×256 cooperative tile
// (cluster 1×2) on CUTLASS's stream-K tile scheduler, for int8, precise fp8
// (4 slices) and fast fp8. Included only by sm90_streamk_*.cu.
//
// Stream-K (CUTLASS's DecompositionMode::StreamK) keeps whole tiles for all
// but the last two waves of output tiles; the tiles of those two (or of the
// one, partial, wave of a small problem) are cut along K and dealt to every
// CTA of a wave in equal shares of k-tiles (at least 8 each), so no SM idles
// through a ragged last wave. A tile's peers meet in the workspace: each but
// the last adds its partial accumulators there, and the last adds them to its
// own and runs the epilogue. int8's int32 partial sums add exactly in any
// order, so its peers add as they finish (Nondeterministic: atomics, no
// waiting on each other; the same bits anyway); precise and fast fp8's fp32
// sums add in k order (Deterministic), so a call gives the same bits on
// every run. Without a workspace, or with too small a one, the kernel runs
// data-parallel: whole tiles.
#pragma once

#include "gemm/cuda/sm90_kernel.cuh"

namespace qgemm::detail::sm90 {

template <class Config, class Input, class Output>
bool run_stream_k_config(const ScaledMmArgs& args, int sm_count) {
  using StreamKKernel = Kernel<Config, Input, Output, false, cutlass::gemm::StreamKScheduler>;
  using Params = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90StreamKParams;
  auto arguments = StreamKKernel::arguments(args, sm_count);
  arguments.scheduler.decomposition_mode = Params::DecompositionMode::StreamK;
  arguments.scheduler.reduction_mode = std::is_same_v<Input, int8_t> ? Params::ReductionMode::Nondeterministic
                                                                     : Params::ReductionMode::Deterministic;
  void* workspace = args.workspace;
  if (workspace == nullptr ||
      StreamKKernel::Gemm::get_workspace_size(arguments) > static_cast<size_t>(args.workspace_bytes)) {
    arguments.scheduler.decomposition_mode = Params::DecompositionMode::DataParallel;
    workspace = nullptr;
  }
  return StreamKKernel::launch(arguments, workspace, args);
}

// The stream-K kernel for the call's input (args.input_dtype,
// args.fp8_fast_accum).
template <class Output>
bool run_stream_k(const ScaledMmArgs& args, int sm_count) {
  using Fp8 = cutlass::float_e4m3_t;
  if (args.input_dtype == DType::kInt8) return run_stream_k_config<Wide1x2, int8_t, Output>(args, sm_count);
  if (args.fp8_fast_accum) return run_stream_k_config<Fp8FastWide1x2, Fp8, Output>(args, sm_count);
  return run_stream_k_config<Fp8Wide1x2, Fp8, Output>(args, sm_count);
}

}  // namespace qgemm::detail::sm90
