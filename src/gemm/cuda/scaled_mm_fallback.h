// scaled_mm_fallback.h — the portable CUDA scaled GEMM that serves every
// shape, stride and alignment (any sm_80+ GPU). The fast CUTLASS kernels take
// the common aligned shapes; this one guarantees a result for the rest.
#pragma once

#include "gemm/scaled_mm_args.h"

namespace qgemm::detail {

void scaled_mm_fallback_cuda(const ScaledMmArgs& args);

}  // namespace qgemm::detail
