// epilogue_math.h — the one scalar definition of the dequantization epilogue,
// used by the CPU backend and the CUDA fallback kernel so that both round
// identically (the CUTLASS kernels build the same expression as an EVT):
//
//   acc'  = acc − azp_term               (int32, exact; azp_term = 0 when symmetric)
//   t     = scale_b · float(acc')        (fp32)
//   D     = fma(scale_a, t, bias)        with bias, else scale_a · t
#pragma once

#include <cstdint>

#include "core/numeric.h"

namespace qgemm::detail {

QGEMM_HD float dequant_epilogue(float accumulator, float scale_a, float scale_b, float bias,
                                bool has_bias) {
  const float scaled_by_b = scale_b * accumulator;
#if defined(__CUDA_ARCH__)
  return has_bias ? __fmaf_rn(scale_a, scaled_by_b, bias) : __fmul_rn(scale_a, scaled_by_b);
#else
  return has_bias ? __builtin_fmaf(scale_a, scaled_by_b, bias) : scale_a * scaled_by_b;
#endif
}

}  // namespace qgemm::detail
