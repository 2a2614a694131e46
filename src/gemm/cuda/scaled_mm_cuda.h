// scaled_mm_cuda.h — CUDA backend entry points of the scaled GEMMs (compiled
// only when QGEMM_WITH_CUDA). Arguments arrive validated.
#pragma once

#include <cstdint>

#include "gemm/scaled_mm_args.h"

namespace qgemm::detail {

void scaled_mm_cuda(const ScaledMmArgs& args);
void azp_adj_cuda(int32_t* out, const int8_t* b, int64_t k, int64_t n, int64_t ldb, int32_t azp,
                  Device device, Stream stream);

}  // namespace qgemm::detail
