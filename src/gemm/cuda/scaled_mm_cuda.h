// scaled_mm_cuda.h — CUDA backend entry points of the scaled GEMMs (compiled
// only when QGEMM_WITH_CUDA). Arguments arrive validated.
#pragma once

#include <cstdint>

#include "gemm/cuda/kernels.h"
#include "gemm/scaled_mm_args.h"

namespace qgemm::detail {

// Enqueues the GEMM on args.stream with the kernel dispatch_table.h picks.
void scaled_mm_cuda(const ScaledMmArgs& args);
void azp_adj_cuda(int32_t* out, const int8_t* b, int64_t k, int64_t n, int64_t ldb, int32_t azp,
                  Device device, Stream stream);

// For tests and benchmarks: the kernel scaled_mm_cuda would run (fallback
// included) and a run with a given kernel, false when that kernel cannot
// take the arguments or is not built for this device.
GemmKernel scaled_mm_cuda_kernel(const ScaledMmArgs& args);
bool scaled_mm_cuda_with(const ScaledMmArgs& args, GemmKernel kernel);

}  // namespace qgemm::detail
