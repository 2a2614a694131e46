// sm90_kernel.cuh — the Hopper (sm_90a) scaled GEMM on CUTLASS 3.x: TMA
// loads, a warp-specialized wgmma mainloop (cooperative or ping-pong, from the
// config), a persistent tile scheduler (or, for kSm90StreamK, the stream-K
// one: sm90_stream_k.cuh), and the dequantization epilogue as an
// epilogue visitor tree stored through TMA — or, for outputs TMA cannot
// address, the direct-store epilogue of sm90_direct_epilogue.cuh. Included
// only by the sm90_*.cu translation units, which instantiate it for the
// configs of sm90_configs.h.
//
// Operand layouts (docs/gemm.md): A [M,K] row-major, B [K,N] column-major —
// both K-major, as wgmma wants them for 8-bit types — and D [M,N] row-major.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/cuda_check.h"
#include "core/cuda_launch.cuh"
#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/epilogue/fusion/sm90_callbacks_tma_warpspecialized.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "gemm/cuda/sm90_tile_swizzle.h"
#include "gemm/cuda/epilogue_evt.cuh"
#include "gemm/cuda/sm90_direct_epilogue.cuh"
#include "gemm/cuda/sm90_fp8_overlap.cuh"
#include "gemm/cuda/sm90_staged_vectors.cuh"
#include "gemm/cuda/sm90_configs.h"
#include "gemm/scaled_mm_args.h"

namespace qgemm::detail::sm90 {

using namespace cute;
namespace fusion = cutlass::epilogue::fusion;

#ifdef CUTLASS_ENABLE_GDC_FOR_SM90
constexpr bool kGdcWaitsCompiled = true;
#else
constexpr bool kGdcWaitsCompiled = false;
#endif
constexpr auto kRound = cutlass::FloatRoundStyle::round_to_nearest;

// The epilogue tree of epilogue_evt.cuh for a CTA tile, input and output type.
// Dynamic strides (bool) make scale_a / scale_b per-tensor or per-row/column
// at run time. kSwapped: the kernel computes Dᵀ = B·Aᵀ (kSm90Decode), so the
// token vectors (scale_a, azp) index its columns and the channel vectors
// (scale_b, bias, azp_adj) its rows — row and column broadcasts trade places.
// kStaged: the vectors are the leaves of sm90_staged_vectors.cuh, staged in
// shared memory by the epilogue load warp during the mainloop, instead of
// CUTLASS's broadcasts, which read global memory after it.
template <class TileShape, class Input, class Output, bool kSwapped = false, bool kStaged = false>
struct Epilogue {
  static constexpr bool kInt8 = std::is_same_v<Input, int8_t>;
  using Accumulator = std::conditional_t<kInt8, int32_t, float>;

  template <class Element, class Compute, class Stride>
  using RowVector = std::conditional_t<kStaged, StagedRowVector<TileShape, Element, Compute, Stride>,
                                       fusion::Sm90RowBroadcast<0, TileShape, Element, Compute, Stride>>;
  template <class Element, class Compute, class Stride>
  using ColVector = std::conditional_t<kStaged, StagedColVector<TileShape, Element, Compute, Stride>,
                                       fusion::Sm90ColBroadcast<0, TileShape, Element, Compute, Stride>>;
  // A vector with one element per token (StrideToken: _1, or bool for
  // per-tensor / per-token at run time) or per channel.
  template <class Element, class Compute, class StrideToken>
  using TokenVector = std::conditional_t<kSwapped, RowVector<Element, Compute, Stride<_0, StrideToken, _0>>,
                                         ColVector<Element, Compute, Stride<StrideToken, _0, _0>>>;
  template <class Element, class Compute, class StrideChannel>
  using ChannelVector = std::conditional_t<kSwapped, ColVector<Element, Compute, Stride<StrideChannel, _0, _0>>,
                                           RowVector<Element, Compute, Stride<_0, StrideChannel, _0>>>;
  // The stride of a vector that is per-tensor or per-element at run time:
  // along N for a row broadcast, along M for a column broadcast.
  template <bool kAlongN>
  static auto dynamic_stride(bool per_element) {
    if constexpr (kAlongN) {
      return Stride<_0, bool, _0>{_0{}, per_element, _0{}};
    } else {
      return Stride<bool, _0, _0>{per_element, _0{}, _0{}};
    }
  }

  using Acc = fusion::Sm90AccFetch;
  using Azp = TokenVector<int32_t, int32_t, _1>;
  using AzpAdj = ChannelVector<int32_t, int32_t, _1>;
  using Corrected = std::conditional_t<
      kInt8, fusion::Sm90EVT<fusion::Sm90Compute<evt::AzpCorrect, int32_t, int32_t, kRound>, Acc, Azp, AzpAdj>,
      Acc>;
  using ScaleB = ChannelVector<float, float, bool>;
  using ScaledByB = fusion::Sm90EVT<fusion::Sm90Compute<evt::RoundedMultiply, float, float, kRound>, ScaleB, Corrected>;
  using ScaleA = TokenVector<float, float, bool>;
  using Bias = ChannelVector<Output, float, _1>;
  using Tree = fusion::Sm90EVT<fusion::Sm90Compute<evt::FusedMultiplyAdd, Output, float, kRound>, ScaleA, ScaledByB, Bias>;

  static typename Tree::Arguments arguments(const ScaledMmArgs& args) {
    typename ScaleA::Arguments scale_a{args.scale_a, 0.0f, dynamic_stride<kSwapped>(args.scale_a_per_token)};
    typename ScaleB::Arguments scale_b{args.scale_b, 0.0f, dynamic_stride<!kSwapped>(args.scale_b_per_channel)};
    typename Bias::Arguments bias{static_cast<const Output*>(args.bias), Output(0.0f), {}};
    if constexpr (kInt8) {
      typename Azp::Arguments azp{args.azp, 1, {}};
      typename AzpAdj::Arguments azp_adj{args.azp_adj, 0, {}};
      typename Corrected::Arguments corrected{{}, azp, azp_adj, {}};
      return {scale_a, {scale_b, corrected, {}}, bias, {}};
    } else {
      return {scale_a, {scale_b, {}, {}}, bias, {}};
    }
  }
};

// One GEMM kernel for a config (tile, cluster, schedule) and input/output
// types, with the TMA epilogue tree or (kDirectStore) the direct-store one,
// on CUTLASS's persistent tile scheduler or (Scheduler = StreamKScheduler,
// cooperative configs only) its stream-K one. kSwapped (kSm90Decode,
// sm90_decode.cuh): the kernel computes Dᵀ = B·Aᵀ — the weight [N, K] as
// CUTLASS's A, the tokens [M, K] as its B (both still K-major) and Dᵀ stored
// column-major, which is D row-major.
template <class Config, class Input, class Output, bool kDirectStore = false,
          class Scheduler = cutlass::gemm::PersistentScheduler, bool kSwapped = false>
struct Kernel {
  static_assert(!(kSwapped && kDirectStore), "the swapped kernel stores through TMA");
  static_assert(!Config::kStagedVectors || std::is_same_v<Scheduler, cutlass::gemm::PersistentScheduler>,
                "the staged vectors count tiles by epilogue subtiles: every subtile of every tile through the pipeline");
  using Tree = Epilogue<typename Config::TileShape, Input, Output, kSwapped, Config::kStagedVectors>;
  using LayoutD = std::conditional_t<kSwapped, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor>;
  using Accumulator = typename Tree::Accumulator;
  static constexpr int kAlignIn = 16 / sizeof(Input);
  static constexpr int kAlignOut = 16 / sizeof(Output);

  using TmaEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, typename Config::TileShape,
      typename Config::ClusterShape, cutlass::epilogue::collective::EpilogueTileAuto, Accumulator,
      float, void, LayoutD, kAlignOut, Output, LayoutD, kAlignOut,
      typename Config::EpilogueSchedule, typename Tree::Tree>::CollectiveOp;
  using CollectiveEpilogue =
      std::conditional_t<kDirectStore, DirectStoreCollective<typename Config::TileShape, Accumulator, Output>, TmaEpilogue>;

  using BuilderMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Input, cutlass::layout::RowMajor, kAlignIn,
      Input, cutlass::layout::ColumnMajor, kAlignIn, Accumulator, typename Config::TileShape,
      typename Config::ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename CollectiveEpilogue::SharedStorage))>,
      typename Config::KernelSchedule>::CollectiveOp;
  // Precise fp8 promotes with the mainloops of sm90_fp8_overlap.cuh (the
  // config's kPromotionSlices); int8 and fast fp8 have nothing to promote.
  static constexpr int kSlices = Tree::kInt8 || Config::kPromotionSlices == 0 ? 0 : Config::kPromotionSlices;
  using CollectiveMainloop = std::conditional_t<kSlices == 0, BuilderMainloop,
                                                Fp8OverlappedPromotion<BuilderMainloop, (kSlices > 0 ? kSlices : 1)>>;

  using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop,
                                                          CollectiveEpilogue, Scheduler>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;

  static typename CollectiveEpilogue::Arguments epilogue_arguments(const ScaledMmArgs& args) {
    if constexpr (kDirectStore) {
      return DirectStoreEpilogue<typename Config::TileShape, Accumulator, Output>::arguments(args);
    } else {
      using StrideD = typename GemmKernel::StrideD;
      StrideD stride_d{};
      if constexpr (kSwapped) {
        stride_d = StrideD{_1{}, args.ldo, int64_t(0)};  // Dᵀ [N, M] column-major
      } else {
        stride_d = StrideD{args.ldo, _1{}, int64_t(0)};
      }
      return {Tree::arguments(args), nullptr, stride_d, static_cast<Output*>(args.out), stride_d};
    }
  }

  // CUTLASS's arguments for this call: problem, operands, epilogue tree,
  // SM count and the persistent scheduler's swizzle. Swapped (Dᵀ = B·Aᵀ),
  // CUTLASS's A is the weight (args.b), its B the tokens and its problem
  // N × M.
  static typename Gemm::Arguments arguments(const ScaledMmArgs& args, int sm_count) {
    using StrideA = typename GemmKernel::StrideA;
    using StrideB = typename GemmKernel::StrideB;
    const auto* a = static_cast<const Input*>(kSwapped ? args.b : args.a);
    const auto* b = static_cast<const Input*>(kSwapped ? args.a : args.b);
    const int64_t lda = kSwapped ? args.ldb : args.lda, ldb = kSwapped ? args.lda : args.ldb;
    const int m = static_cast<int>(kSwapped ? args.n : args.m), n = static_cast<int>(kSwapped ? args.m : args.n);
    const int k = static_cast<int>(args.k);
    typename Gemm::Arguments arguments{cutlass::gemm::GemmUniversalMode::kGemm,
                                       {m, n, k, 1},
                                       {a, StrideA{lda, _1{}, int64_t(0)}, b, StrideB{ldb, _1{}, int64_t(0)}},
                                       epilogue_arguments(args)};
    arguments.hw_info.device_id = args.device.index;
    arguments.hw_info.sm_count = sm_count;
    arguments.scheduler.max_swizzle_size = sm90_tile_swizzle(args.m, args.n, !Tree::kInt8 && args.fp8_fast_accum);
    return arguments;
  }

  // Enqueues the GEMM with `arguments` on args.stream; false when CUTLASS
  // cannot implement them (alignment, strides) or would need a workspace
  // and `workspace` is null — the caller falls back. With a workspace,
  // initialize() clears what the kernel needs cleared in it (stream-K's
  // flags: a cudaMemsetAsync on the stream; no allocation, no host
  // synchronization).
  static bool launch(const typename Gemm::Arguments& arguments, void* workspace, const ScaledMmArgs& args) {
    Gemm gemm;
    if (gemm.can_implement(arguments) != cutlass::Status::kSuccess) return false;
    if (workspace == nullptr && Gemm::get_workspace_size(arguments) != 0) return false;
    const auto stream = as_cuda_stream(args.stream);
    if (gemm.initialize(arguments, workspace, stream) != cutlass::Status::kSuccess) return false;
    // With PDL (qgemm/launch.h): CUTLASS's own waits, compiled in by
    // CUTLASS_ENABLE_GDC_FOR_SM90 (src/CMakeLists.txt), hold every global
    // access of the kernel until the preceding grid has completed. A
    // translation unit built without them (sm90_streamk_*.cu) launches the
    // ordinary way.
    const bool programmatic = kGdcWaitsCompiled && device_launches_programmatically(args.device.index);
    const cutlass::Status status = gemm.run(stream, nullptr, programmatic);
    QGEMM_CUDA_CHECK(cudaGetLastError());
    if (status != cutlass::Status::kSuccess) {
      throw Error(ErrorKind::kBackend, "scaled_mm: CUTLASS sm90 kernel launch failed");
    }
    return true;
  }

  // Enqueues the GEMM without a workspace (see launch).
  static bool run(const ScaledMmArgs& args, int sm_count) { return launch(arguments(args, sm_count), nullptr, args); }
};

}  // namespace qgemm::detail::sm90

namespace qgemm::detail::sm90 {

// Runs the config `kernel` names for Input → Output (see sm90_configs.h).
template <class Input, class Output>
bool run_config(GemmKernel kernel, const ScaledMmArgs& args, int sm_count) {
  constexpr bool kInt8 = std::is_same_v<Input, int8_t>;
  using WideConfig = std::conditional_t<kInt8, Wide, Fp8Wide>;
  using SquareConfig = std::conditional_t<kInt8, Square, Fp8Square>;
  using NarrowConfig = std::conditional_t<kInt8, Narrow, Fp8Narrow>;
  switch (kernel) {
    case GemmKernel::kSm90Wide: return Kernel<WideConfig, Input, Output>::run(args, sm_count);
    case GemmKernel::kSm90Wide1x2:
      return Kernel<std::conditional_t<kInt8, Wide1x2, Fp8Wide1x2>, Input, Output>::run(args, sm_count);
    case GemmKernel::kSm90Square: return Kernel<SquareConfig, Input, Output>::run(args, sm_count);
    case GemmKernel::kSm90Narrow: return Kernel<NarrowConfig, Input, Output>::run(args, sm_count);
    case GemmKernel::kSm90Small1x2:
      return Kernel<std::conditional_t<kInt8, Small1x2, Fp8Small1x2>, Input, Output>::run(args, sm_count);
    case GemmKernel::kSm90Small2x1:
      return Kernel<std::conditional_t<kInt8, Small2x1, Fp8Small2x1>, Input, Output>::run(args, sm_count);
    case GemmKernel::kSm90Narrow2x1:  // precise fp8: its kSm90Square is this tile
      return Kernel<std::conditional_t<kInt8, Narrow2x1, Fp8Square>, Input, Output>::run(args, sm_count);
    case GemmKernel::kSm90Wide192:
      return Kernel<std::conditional_t<kInt8, Wide192, Fp8Wide192>, Input, Output>::run(args, sm_count);
    case GemmKernel::kSm90Coop128:  // precise fp8 only
      if constexpr (kInt8) return false;
      else return Kernel<Fp8Coop128, Input, Output>::run(args, sm_count);
    default: return false;
  }
}

// The direct-store kernel (kSm90Direct) for Input → Output: int8 on Square's
// 128×128 ping-pong tile, precise fp8 on its Fp8Square (64×128 ping-pong,
// overlapped promotion) — each the tile of its type that did well across M
// in the sweeps. Instantiated only by sm90_direct_*.cu.
template <class Input, class Output>
bool run_direct(const ScaledMmArgs& args, int sm_count) {
  constexpr bool kInt8 = std::is_same_v<Input, int8_t>;
  return Kernel<std::conditional_t<kInt8, Square, Fp8Square>, Input, Output, true>::run(args, sm_count);
}

// Runs the fast-accumulation fp8 config `kernel` names (Fp8FastWide /
// Fp8FastWide192 / Fp8FastWide1x2 / Fp8FastSquare / Fp8FastNarrow / Fp8FastSmall1x2 / Fp8FastSmall2x1); false
// for other kernels. Instantiated only by sm90_fp8fast_*.cu.
template <class Output>
bool run_fp8_fast_config(GemmKernel kernel, const ScaledMmArgs& args, int sm_count) {
  using Input = cutlass::float_e4m3_t;
  switch (kernel) {
    case GemmKernel::kSm90Wide: return Kernel<Fp8FastWide, Input, Output>::run(args, sm_count);
    case GemmKernel::kSm90Wide192: return Kernel<Fp8FastWide192, Input, Output>::run(args, sm_count);
    case GemmKernel::kSm90Wide1x2: return Kernel<Fp8FastWide1x2, Input, Output>::run(args, sm_count);
    case GemmKernel::kSm90Square: return Kernel<Fp8FastSquare, Input, Output>::run(args, sm_count);
    case GemmKernel::kSm90Narrow: return Kernel<Fp8FastNarrow, Input, Output>::run(args, sm_count);
    case GemmKernel::kSm90Small1x2: return Kernel<Fp8FastSmall1x2, Input, Output>::run(args, sm_count);
    case GemmKernel::kSm90Small2x1: return Kernel<Fp8FastSmall2x1, Input, Output>::run(args, sm_count);
    default: return false;
  }
}

// One tile's three builds — int8, precise fp8, fast fp8 — run for the
// call's input.
template <class Int8Config, class Fp8Config, class Fp8FastConfig, class Output>
bool run_for_input(const ScaledMmArgs& args, int sm_count) {
  using Fp8 = cutlass::float_e4m3_t;
  if (args.input_dtype == DType::kInt8) return Kernel<Int8Config, int8_t, Output>::run(args, sm_count);
  if (args.fp8_fast_accum) return Kernel<Fp8FastConfig, Fp8, Output>::run(args, sm_count);
  return Kernel<Fp8Config, Fp8, Output>::run(args, sm_count);
}

// The one-wave tile 128×kN (cluster kClusterM×kClusterN) for the call's input.
template <int kN, class Output, int kClusterM = 1, int kClusterN = 2>
bool run_one_wave(const ScaledMmArgs& args, int sm_count) {
  return run_for_input<OneWave<kN, kClusterM, kClusterN>, Fp8OneWave<kN, kClusterM, kClusterN>,
                       Fp8FastOneWave<kN, kClusterM, kClusterN>, Output>(args, sm_count);
}

// The one-wave tiles (kSm90Wide80, kSm90Wide96, and both in clusters of 2×1:
// kSm90Wide80Pairs, kSm90Wide96Pairs) for the call's input: int8, precise fp8
// or fast fp8; false for other kernels. Instantiated only by sm90_one_wave.cu.
template <class Output>
bool run_one_wave_config(GemmKernel kernel, const ScaledMmArgs& args, int sm_count) {
  switch (kernel) {
    case GemmKernel::kSm90Wide80: return run_one_wave<80, Output>(args, sm_count);
    case GemmKernel::kSm90Wide96: return run_one_wave<96, Output>(args, sm_count);
    case GemmKernel::kSm90Wide80Pairs: return run_one_wave<80, Output, 2, 1>(args, sm_count);
    case GemmKernel::kSm90Wide96Pairs: return run_one_wave<96, Output, 2, 1>(args, sm_count);
    default: return false;
  }
}

// The cluster-1×4 tiles (kSm90Thin48, kSm90Wide80x4, kSm90Wide96x4) for
// the call's input; false for other kernels. Instantiated only by
// sm90_cluster4_*.cu.
template <class Output>
bool run_cluster4_config(GemmKernel kernel, const ScaledMmArgs& args, int sm_count) {
  switch (kernel) {
    case GemmKernel::kSm90Thin48: return run_for_input<Thin<48>, Fp8Thin<48>, Fp8FastThin<48>, Output>(args, sm_count);
    case GemmKernel::kSm90Wide80x4: return run_one_wave<80, Output, 1, 4>(args, sm_count);
    case GemmKernel::kSm90Wide96x4: return run_one_wave<96, Output, 1, 4>(args, sm_count);
    default: return false;
  }
}

}  // namespace qgemm::detail::sm90
