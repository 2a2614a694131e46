// sm80_kernel.cuh — the mma.sync scaled GEMMs on CUTLASS 2.x: Ampere
// (sm_80) int8 and Ada (sm_89) fp8 e4m3. Multistage cp.async mainloop,
// mma.sync m16n8k32 (int8: int32 accumulation; e4m3: fp32, each k tile
// summed in a second accumulator set and then added to the first — CUTLASS's
// sm_89 staged accumulation, the precise mode: sm80_configs.h), and the
// dequantization epilogue as a 2.x epilogue visitor tree (Sm80EVT).
// Included only by the sm80_int8_*.cu and sm89_fp8_*.cu translation units.
//
// Same expression as epilogue_evt.cuh (fp8 has no zero point: the tree
// reads the fp32 accumulator directly). The 2.x row/column broadcasts cannot
// switch to a scalar at run time, so a scale is the product of a vector
// node (null pointer: reads 1) and a scalar node (null pointer: reads 1);
// one factor is always exactly 1, so the product is the scale, unrounded.
// The 2.x row broadcast loads 16-byte vectors: scale_b, bias and azp_adj
// must be 16-byte aligned (the dispatcher checks).
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/cuda_check.h"
#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/numeric_conversion.h"
#include "cutlass/gemm/gemm.h"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/default_gemm_universal_with_visitor.h"
#include "cutlass/epilogue/threadblock/fusion/visitors.hpp"
#include "gemm/cuda/epilogue_evt.cuh"
#include "gemm/cuda/kernels.h"
#include "gemm/cuda/sm80_configs.h"
#include "gemm/scaled_mm_args.h"

namespace qgemm::detail::sm80 {

using namespace cute;
namespace tb = cutlass::epilogue::threadblock;
constexpr auto kRound = cutlass::FloatRoundStyle::round_to_nearest;

template <class Config, class Input, class Output>
struct Kernel {
  static constexpr bool kInt8 = std::is_same_v<Input, int8_t>;
  static_assert(kInt8 || std::is_same_v<Input, cutlass::float_e4m3_t>, "int8 or fp8 e4m3 inputs");
  using Accumulator = std::conditional_t<kInt8, int32_t, float>;
  using ArchTag = std::conditional_t<kInt8, cutlass::arch::Sm80, cutlass::arch::Sm89>;
  using MathOperator = std::conditional_t<kInt8, cutlass::arch::OpMultiplyAddSaturate, cutlass::arch::OpMultiplyAdd>;
  static constexpr int kAlignOut = 16 / sizeof(Output);
  using ThreadMap = tb::OutputTileThreadLayout<typename Config::TileShape, typename Config::WarpShape, Output,
                                               kAlignOut, 1>;

  using Acc = tb::VisitorAccFetch;
  using Azp = tb::VisitorColBroadcast<ThreadMap, int32_t, Stride<_1, _0, int32_t>>;
  using AzpAdj = tb::VisitorRowBroadcast<ThreadMap, int32_t, Stride<_0, _1, int32_t>>;
  using Corrected = std::conditional_t<
      kInt8, tb::Sm80EVT<tb::VisitorCompute<evt::AzpCorrect, int32_t, int32_t, kRound>, Acc, Azp, AzpAdj>, Acc>;

  using ScaleBVector = tb::VisitorRowBroadcast<ThreadMap, float, Stride<_0, _1, int32_t>>;
  using ScaleAVector = tb::VisitorColBroadcast<ThreadMap, float, Stride<_1, _0, int32_t>>;
  using Scalar = tb::VisitorScalarBroadcast<float>;
  using ScaleB = tb::Sm80EVT<tb::VisitorCompute<evt::RoundedMultiply, float, float, kRound>, ScaleBVector, Scalar>;
  using ScaleA = tb::Sm80EVT<tb::VisitorCompute<evt::RoundedMultiply, float, float, kRound>, ScaleAVector, Scalar>;

  using ScaledByB = tb::Sm80EVT<tb::VisitorCompute<evt::RoundedMultiply, float, float, kRound>, ScaleB, Corrected>;
  using Bias = tb::VisitorRowBroadcast<ThreadMap, Output, Stride<_0, _1, int32_t>>;
  using Dequant = tb::Sm80EVT<tb::VisitorCompute<evt::FusedMultiplyAdd, Output, float, kRound>, ScaleA, ScaledByB, Bias>;
  using Store = tb::VisitorAuxStore<ThreadMap, Output, kRound, Stride<int64_t, _1, int32_t>>;
  using Tree = tb::Sm80EVT<Store, Dequant>;

  using GemmKernel = typename cutlass::gemm::kernel::DefaultGemmWithVisitor<
      Input, cutlass::layout::RowMajor, cutlass::ComplexTransform::kNone, 16, Input,
      cutlass::layout::ColumnMajor, cutlass::ComplexTransform::kNone, 16, Output, cutlass::layout::RowMajor,
      kAlignOut, Accumulator, float, cutlass::arch::OpClassTensorOp, ArchTag, typename Config::TileShape,
      typename Config::WarpShape, cutlass::gemm::GemmShape<16, 8, 32>, Tree,
      cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, Config::Stages, MathOperator,
      1>::GemmKernel;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;

  // scale = vector[i] · scalar: the vector node reads `ptr` when per-element,
  // the scalar node reads ptr[0] otherwise; the absent one reads 1.
  static typename Tree::Arguments tree_arguments(const ScaledMmArgs& args) {
    typename ScaleA::Arguments scale_a{
        {args.scale_a_per_token ? args.scale_a : nullptr, 1.0f, {}},
        {{1.0f}, {args.scale_a_per_token ? nullptr : args.scale_a}, {}},
        {}};
    typename ScaleB::Arguments scale_b{
        {args.scale_b_per_channel ? args.scale_b : nullptr, 1.0f, {}},
        {{1.0f}, {args.scale_b_per_channel ? nullptr : args.scale_b}, {}},
        {}};
    typename Corrected::Arguments corrected{};
    if constexpr (kInt8) corrected = {{}, {args.azp, 1, {}}, {args.azp_adj, 0, {}}, {}};
    typename Bias::Arguments bias{static_cast<const Output*>(args.bias), Output(0.0f), {}};
    typename Dequant::Arguments dequant{scale_a, {scale_b, corrected, {}}, bias, {}};
    typename Store::Arguments store{static_cast<Output*>(args.out), {args.ldo, _1{}, int32_t(0)}};
    return {dequant, store};
  }

  static bool run(const ScaledMmArgs& args) {
    typename Gemm::Arguments arguments(
        cutlass::gemm::GemmUniversalMode::kGemm,
        {static_cast<int>(args.m), static_cast<int>(args.n), static_cast<int>(args.k)}, 1,
        tree_arguments(args), args.a, args.b, nullptr, nullptr, 0, 0, 0, 0, args.lda, args.ldb, 0, 0);
    Gemm gemm;
    if (gemm.can_implement(arguments) != cutlass::Status::kSuccess) return false;
    if (Gemm::get_workspace_size(arguments) != 0) return false;
    const auto stream = as_cuda_stream(args.stream);
    if (gemm.initialize(arguments, nullptr, stream) != cutlass::Status::kSuccess) return false;
    const cutlass::Status status = gemm.run(stream);
    QGEMM_CUDA_CHECK(cudaGetLastError());
    if (status != cutlass::Status::kSuccess) {
      throw Error(ErrorKind::kBackend, kInt8 ? "scaled_mm: CUTLASS sm80 int8 kernel launch failed"
                                             : "scaled_mm: CUTLASS sm89 fp8 kernel launch failed");
    }
    return true;
  }
};

template <class Input, class Output>
bool run_config(GemmKernel kernel, const ScaledMmArgs& args) {
  constexpr bool kInt8 = std::is_same_v<Input, int8_t>;
  using LargeConfig = std::conditional_t<kInt8, Large, Fp8Large>;
  using SmallConfig = std::conditional_t<kInt8, Small, Fp8Small>;
  switch (kernel) {
    case GemmKernel::kSm80Large: return Kernel<LargeConfig, Input, Output>::run(args);
    case GemmKernel::kSm80Small: return Kernel<SmallConfig, Input, Output>::run(args);
    default: return false;
  }
}

}  // namespace qgemm::detail::sm80
