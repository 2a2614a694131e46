// wonly_dense.cuh — the prefill path of weight_only_mm on Hopper (sm_90a):
// with a workspace that holds the whole dequantized weight
// (weight_only_dense_workspace_bytes) and many tokens (dense_min_tokens in
// wonly_dispatch.cu), the weight is dequantized ONCE into the workspace
// (wonly_dense_pass.cuh),
//
//   ŵ [N, K] in T, row-major      ŵ = round_T(q·s_T + o_T)  (wonly_math.h)
//
// and a dense CUTLASS 3.x GEMM computes out = round_T(a·ŵᵀ + bias) with fp32
// accumulation: the same values as the fused kernels (up to the fp32
// summation order), which dequantize every weight tile once per token tile
// — 16 to 32 times at M = 4096 — where this path does it once. Instantiated
// in wonly_dense.cu, once per activation dtype.
//
// GEMM operands (K-major, as wgmma reads 16-bit types best): A = a [M,K]
// row-major (lda), B = ŵ as a column-major K×N (ldb = K), D = out [M,N]
// row-major (ldo). Epilogue tree: D = round_T(acc + bias[n]); an absent bias
// is a null pointer that reads −0, not another kernel (−0 + acc = acc for
// every acc, −0 included, as wonly_math.h's "no addition without a bias").
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/cuda_check.h"
#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/epilogue/fusion/sm90_callbacks_tma_warpspecialized.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "wonly/cuda/wonly_cuda.h"
#include "wonly/cuda/wonly_dense_pass.cuh"

namespace qgemm::detail::wonly_dense {

using namespace cute;

// The dense GEMM: 128×256×64 tiles, two CTAs along M per cluster sharing each
// weight tile by TMA multicast, the cooperative warp-specialized mainloop
// and a persistent tile scheduler: on the H100 about cuBLAS bf16's speed
// (docs/weight_only.md, "Dense prefill path").
template <class T>
struct DenseGemm {
  using TileShape = Shape<_128, _256, _64>;
  using ClusterShape = Shape<_2, _1, _1>;
  static constexpr int kAlign = 8;  // 16 bytes of T
  static constexpr auto kRound = cutlass::FloatRoundStyle::round_to_nearest;

  using Bias = cutlass::epilogue::fusion::Sm90RowBroadcast<0, TileShape, T, float, Stride<_0, _1, _0>>;
  using Tree = cutlass::epilogue::fusion::Sm90EVT<
      cutlass::epilogue::fusion::Sm90Compute<cutlass::plus, T, float, kRound>,
      cutlass::epilogue::fusion::Sm90AccFetch, Bias>;

  using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, cutlass::layout::RowMajor, kAlign, T,
      cutlass::layout::RowMajor, kAlign, cutlass::epilogue::TmaWarpSpecializedCooperative, Tree>::CollectiveOp;
  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, T, cutlass::layout::RowMajor, kAlign, T,
      cutlass::layout::ColumnMajor, kAlign, float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename CollectiveEpilogue::SharedStorage))>,
      cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
  using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop,
                                                          CollectiveEpilogue, cutlass::gemm::PersistentScheduler>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;

  // The GEMM on ŵ in the workspace.
  static typename Gemm::Arguments arguments(const WeightOnlyArgs& args, int sm_count) {
    using StrideA = typename GemmKernel::StrideA;
    using StrideB = typename GemmKernel::StrideB;
    using StrideD = typename GemmKernel::StrideD;
    typename Bias::Arguments bias{static_cast<const T*>(args.bias), T(-0.0f), {}};
    typename Gemm::Arguments arguments{
        cutlass::gemm::GemmUniversalMode::kGemm,
        {static_cast<int>(args.m), static_cast<int>(args.n), static_cast<int>(args.k), 1},
        {static_cast<const T*>(args.a), StrideA{args.lda, _1{}, int64_t(0)}, static_cast<const T*>(args.workspace),
         StrideB{args.k, _1{}, int64_t(0)}},
        {{{}, bias, {}}, nullptr, StrideD{args.ldo, _1{}, int64_t(0)}, static_cast<T*>(args.out),
         StrideD{args.ldo, _1{}, int64_t(0)}}};
    arguments.hw_info.device_id = args.device.index;
    arguments.hw_info.sm_count = sm_count;
    return arguments;
  }
};

// The dense path for one activation dtype: false (nothing launched) when the
// GEMM cannot take these operands; the caller then runs the fused kernels.
template <bool kBf16>
bool run(const WeightOnlyArgs& args, int sm_count) {
  using Dense = DenseGemm<std::conditional_t<kBf16, cutlass::bfloat16_t, cutlass::half_t>>;
  return run_dense_path<kBf16, /*kPdl=*/true, typename Dense::Gemm>(args, Dense::arguments(args, sm_count),
                                                                     "CUTLASS dense GEMM");
}

}  // namespace qgemm::detail::wonly_dense
