// The dense prefill path of weight_only_mm on GPUs without wgmma (sm_80 code:
// A100, and through binary compatibility sm_86 / sm_89): the dequantization
// pass of wonly_dense_pass.cuh, then a CUTLASS 2.x GEMM (multistage cp.async
// mainloop, mma.sync m16n8k16, fp32 accumulation) on ŵ:
//
//   out = round_T(acc + bias)    LinearCombination: fma(1, acc, 1·bias[n]),
//                                the bias read as C with row stride 0; no
//                                bias: beta = 0, C unread, out = round_T(acc)
//
// the same values as the fused kernels up to the fp32 summation order (the
// sm_90 path, wonly_dense.cuh, says why the pass pays at many tokens).
// 128×256×32 tiles of 8 warps (64×64 each), 3 stages: CUTLASS's usual
// large-problem shape for 16-bit inputs on Ampere.
#include <cuda_runtime.h>

#include <type_traits>

#include "core/cuda_check.h"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/thread/linear_combination.h"
#include "cutlass/gemm/device/gemm_universal.h"
#include "wonly/cuda/wonly_cuda.h"
#include "wonly/cuda/wonly_dense_pass.cuh"

namespace qgemm::detail {
namespace {

template <class T>
using DenseGemmSm80 = cutlass::gemm::device::GemmUniversal<
    T, cutlass::layout::RowMajor, T, cutlass::layout::ColumnMajor, T, cutlass::layout::RowMajor, float,
    cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80, cutlass::gemm::GemmShape<128, 256, 32>,
    cutlass::gemm::GemmShape<64, 64, 32>, cutlass::gemm::GemmShape<16, 8, 16>,
    cutlass::epilogue::thread::LinearCombination<T, 8, float, float, cutlass::epilogue::thread::ScaleType::Default,
                                                 cutlass::FloatRoundStyle::round_to_nearest>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<8>, 3, 8, 8>;

template <bool kBf16>
bool run(const WeightOnlyArgs& args) {
  using T = std::conditional_t<kBf16, cutlass::bfloat16_t, cutlass::half_t>;
  using Gemm = DenseGemmSm80<T>;
  const float beta = args.bias != nullptr ? 1.0f : 0.0f;
  const typename Gemm::Arguments arguments(
      cutlass::gemm::GemmUniversalMode::kGemm,
      {static_cast<int>(args.m), static_cast<int>(args.n), static_cast<int>(args.k)}, 1, {1.0f, beta},
      static_cast<const T*>(args.a), static_cast<const T*>(args.workspace), static_cast<const T*>(args.bias),
      static_cast<T*>(args.out), 0, 0, 0, 0, args.lda, args.k, 0, args.ldo);
  return wonly_dense::run_dense_path<kBf16, /*kPdl=*/false, Gemm>(args, arguments, "CUTLASS sm80 dense GEMM");
}

}  // namespace

bool run_wonly_dense_sm80(const WeightOnlyArgs& args) {
  return args.dtype == DType::kBFloat16 ? run<true>(args) : run<false>(args);
}

}  // namespace qgemm::detail
